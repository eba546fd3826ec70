// The command line's own words alone, not the catalog: `--help` and the entry point load only
// these (the Turkish ones when the config asks for them), and the whole catalog comes with the runtime.
import { isatty } from 'node:tty';
import { peekConfigFileLocaleWord } from '../../config/locale-word.js';
import { terminalText } from '../../errors.js';
import { cli as englishCli } from '../../i18n/en/cli.js';
import { scrubSecrets } from '../../lib/scrub.js';
import { configFlag, ExitCode, parseCliArgs } from './args.js';

/**
 * Everything the command line needs after its arguments have been read. In the bundle that
 * `bin/queue-ops.js` runs, this `import()` loads scripts/cli-runtime-loader.js instead, which
 * compiles the same module (linked with all it imports) with V8's code cache (scripts/build.js).
 */
const loadCliRuntime = () => import('./run.js');

/**
 * The command line's own words in a locale other than English (`src/i18n/<locale>/cli.ts`), for
 * `--help` when the config asks for it; rejects when there is no such locale. The bundle holds
 * each locale's words as a chunk of its own.
 */
const loadCliWords = (locale: string): Promise<{ cli: typeof englishCli }> =>
  import(`../../i18n/${locale}/cli.js`);

/** The command line's words in the locale a config asks for; English when it asks for none we speak. */
async function cliWordsFor(locale: string | undefined): Promise<typeof englishCli> {
  if (locale === undefined || locale === 'en') return englishCli;
  try {
    return (await loadCliWords(locale)).cli;
  } catch {
    return englishCli;
  }
}

/**
 * `queue-ops [--config F] [--user U] [--json] <words>`: the entry point, and the only place the
 * command line touches `process`. It imports only the argument parser and the command line's own
 * English words: `--help` answers from these, and everything else loads the runtime (`loadCliRuntime`).
 */
async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (asksForHelp(argv)) {
    const configPath = configFlag(argv) ?? process.env.QUEUE_OPS_CONFIG ?? 'queue-ops.yml';
    const cli = await cliWordsFor(peekConfigFileLocaleWord(configPath, process.env));
    process.stdout.write(`${cli.usage}\n`);
    return ExitCode.Ok;
  }
  const { runCli } = await loadCliRuntime();
  return runCli({
    argv,
    env: process.env,
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    // Not `process.stderr.isTTY`: that builds the stream (a socket on a pipe) in runs that never write to it.
    stderrIsTTY: isatty(2),
    program: () => programName(process.argv[1], process.cwd(), process.env.PATH),
  });
}

/**
 * How to run this command line again, for the buttons hint: `queue-ops` when it was found on
 * PATH (an install), `npx queue-ops` through a project's node_modules/.bin, else `node` and its
 * path (a clone: `node bin/queue-ops.js`).
 */
export function programName(script: string | undefined, cwd: string, path = ''): string {
  if (script === undefined) return 'queue-ops';
  const dir = script.slice(0, Math.max(0, script.lastIndexOf('/')));
  if (/\/node_modules\/\.bin$/.test(dir)) return 'npx queue-ops';
  if (script.endsWith('/queue-ops') && path.split(':').includes(dir)) return 'queue-ops';
  const relative = script.startsWith(`${cwd}/`) ? script.slice(cwd.length + 1) : script;
  return `node ${/^[\w@%+=:,./-]+$/.test(relative) ? relative : `'${relative.replace(/'/g, `'\\''`)}'`}`;
}

/** As `runCli` decides it; a command line it would refuse is left to it, to answer in full. */
function asksForHelp(argv: readonly string[]): boolean {
  try {
    return parseCliArgs(argv).help;
  } catch {
    return false;
  }
}

main().then(
  (code) => exit(code),
  (error: unknown) => {
    // runCli answers every expected failure itself; reaching here is a bug. No stack on stdout.
    const reason = String((error as Error)?.message ?? error);
    process.stderr.write(`${terminalText(scrubSecrets(englishCli.unexpectedFailure(reason)))}\n`);
    exit(ExitCode.Failed);
  },
);

/** Exits once stdout has drained: a piped `--json` must never be cut short. */
function exit(code: number): void {
  process.exitCode = code;
  process.stdout.write('', () => process.exit(code));
}
