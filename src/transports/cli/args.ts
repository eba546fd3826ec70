import { ErrorCode, OpsError } from '../../errors.js';
// Only these parts of the catalog, in English unless the caller passes its locale's: the entry
// point loads this module before the runtime.
import { actions as englishActions } from '../../i18n/en/actions.js';
import { cli as englishCli } from '../../i18n/en/cli.js';
import type { Catalog } from '../../i18n/index.js';
import { suggestFlag } from '../../lib/suggest.js';

/** Exit codes scripts rely on (README documents them). */
export const ExitCode = {
  Ok: 0,
  /** The command ran and failed: unknown system or queue, Redis down. */
  Failed: 1,
  /** The invocation was wrong: bad flags, unknown verb, bad argument, or an invalid config file. */
  Usage: 2,
} as const;

/** What the command line asked for, before any config is read. */
export interface CliArgs {
  config?: string;
  user?: string;
  json: boolean;
  help: boolean;
  /** The words after `/queue`: the verb and everything after it, flags included. */
  words: string[];
}

/** A Slack user id, as `roles:` lists them (U… or, on Enterprise Grid, W…). */
const SLACK_USER_ID = /^[UW][A-Z0-9]+$/;

/** The CLI's own options that take a value (`--config F`, `-c F`, `--config=F`). */
const VALUE_FLAGS = new Set(['--config', '-c', '--user', '-u']);

/**
 * `[--config F] [--user U] [--json] <verb> <words…>`. The CLI's own options are read only before
 * the verb: everything after it belongs to the command, flags included, exactly as in Slack
 * (`queue-ops revoke zeus <id> --terminate` reaches `revoke`). The one exception is `--json`,
 * which scripts append after the words (`queue-ops status --json`) and no command uses: it is
 * taken as the output format wherever it stands. `--` before the verb ends the options; what
 * follows is the command's, even a `--json`. An unknown option before the verb is a usage error.
 */
export function parseCliArgs(argv: readonly string[], t: Catalog['cli'] = englishCli): CliArgs {
  const out: CliArgs = { json: false, help: false, words: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.words.push(...argv.slice(i + 1));
      return out;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const takeValue = (): string => {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '' || (eq === -1 && value.startsWith('--'))) {
        throw new OpsError(ErrorCode.UsageError, {
          message: t.flagNeedsValue(flag),
          usage: 'queue-ops --help',
        });
      }
      return value;
    };
    switch (flag) {
      case '--json':
        out.json = true;
        break;
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--config':
      case '-c':
        out.config = takeValue();
        break;
      case '--user':
      case '-u': {
        const user = takeValue();
        // Roles name Slack user ids: any other word would only ever be a nobody, refused later
        // with a reason that hides the typo.
        if (!SLACK_USER_ID.test(user)) {
          throw new OpsError(ErrorCode.UsageError, { message: t.badUser(user), usage: 'queue-ops --help' });
        }
        out.user = user;
        break;
      }
      default: {
        const likely = suggestFlag(flag, ['--json', '--help', '--config', '--user']);
        throw new OpsError(ErrorCode.UsageError, {
          message: likely ? t.unknownFlagSuggest(flag, likely) : t.unknownFlag(flag),
          usage: 'queue-ops --help',
        });
      }
    }
  }
  for (const word of argv.slice(i)) {
    if (word === '--json') out.json = true;
    else out.words.push(word);
  }
  return out;
}

/**
 * Whether the line asks for `--json`, read the way `parseCliArgs` reads it but without failing,
 * so that a line that does not parse still answers in JSON.
 */
export function wantsJson(argv: readonly string[]): boolean {
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return false;
    if (!arg.startsWith('-') || arg === '-') break;
    if (arg === '--json') return true;
    if (VALUE_FLAGS.has(arg)) i++;
  }
  return argv.slice(i).includes('--json');
}

/**
 * The config file the line names (`--config F`, `-c F`, `--config=F`), read the way
 * `parseCliArgs` reads it but without failing, so that a line it refuses, and `--help`, can still
 * be answered in the config's locale.
 */
export function configFlag(argv: readonly string[]): string | undefined {
  let config: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--' || !arg.startsWith('-') || arg === '-') break;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (!VALUE_FLAGS.has(flag)) continue;
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (flag === '--config' || flag === '-c') config = value;
  }
  return config;
}

/**
 * `audit export [--since ISO]`: the export's own option, read from the words after `export`
 * (the command line runs the export itself; it streams JSON lines, not one message).
 */
export function parseExportWords(
  words: readonly string[],
  t: Pick<Catalog, 'cli' | 'actions'> = { cli: englishCli, actions: englishActions },
): { since?: string } {
  const usage = t.actions.exportUsage;
  let since: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--since' || word.startsWith('--since=')) {
      const value = word === '--since' ? words[++i] : word.slice('--since='.length);
      if (value === undefined || value === '')
        throw new OpsError(ErrorCode.UsageError, { message: t.cli.flagNeedsValue('--since'), usage });
      if (since !== undefined)
        throw new OpsError(ErrorCode.UsageError, { message: t.actions.tooMany, usage });
      since = value;
      continue;
    }
    throw new OpsError(ErrorCode.UsageError, {
      message: word.startsWith('-') ? t.cli.unknownFlag(word) : t.actions.tooMany,
      usage,
    });
  }
  return since === undefined ? {} : { since };
}
