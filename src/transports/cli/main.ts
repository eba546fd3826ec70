import { scrubSecrets } from '../../lib/logger.js';
import { ExitCode, runCli } from './run.js';

/**
 * `queue-ops [--config F] [--user U] [--json] <words>`: the entry point, and the only place the
 * command line touches `process`.
 */
async function main(): Promise<number> {
  return runCli({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}

main().then(
  (code) => exit(code),
  (error: unknown) => {
    // runCli answers every expected failure itself; reaching here is a bug. No stack on stdout.
    process.stderr.write(
      `queue-ops: unexpected failure: ${scrubSecrets(String((error as Error)?.message ?? error))}\n`,
    );
    exit(ExitCode.Failed);
  },
);

/** Exits once stdout has drained: a piped `--json` must never be cut short. */
function exit(code: number): void {
  process.exitCode = code;
  process.stdout.write('', () => process.exit(code));
}
