import { messages } from '../../i18n/index.js';
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
    stderrIsTTY: process.stderr.isTTY === true,
  });
}

main().then(
  (code) => exit(code),
  (error: unknown) => {
    // runCli answers every expected failure itself; reaching here is a bug. No stack on stdout.
    const reason = String((error as Error)?.message ?? error);
    process.stderr.write(`${scrubSecrets(messages('en').cli.unexpectedFailure(reason))}\n`);
    exit(ExitCode.Failed);
  },
);

/** Exits once stdout has drained: a piped `--json` must never be cut short. */
function exit(code: number): void {
  process.exitCode = code;
  process.stdout.write('', () => process.exit(code));
}
