import { ErrorCode, OpsError } from '../../errors.js';
import { messages } from '../../i18n/index.js';

/** What the command line asked for, before any config is read. */
export interface CliArgs {
  config?: string;
  user?: string;
  json: boolean;
  help: boolean;
  /** `audit export --since ISO`. */
  since?: string;
  /** The words after `/queue`. */
  words: string[];
}

/** The command line's own options; anything else after the verb belongs to the command. */
const CLI_OPTIONS = new Set(['--json', '--help', '-h', '--config', '-c', '--user', '-u', '--since']);

/**
 * `[--config F] [--user U] [--json] <words>`. Options may also follow the words
 * (`queue-ops status --json`), since that is how people type; `--` ends the options for words
 * that really start with a dash. Before the verb an unknown option is a usage error; after it,
 * an option the command line does not know is the command's (`revoke zeus <id> --terminate`).
 */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  const t = messages('en').cli;
  const out: CliArgs = { json: false, help: false, words: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.words.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (out.words.length > 0 && !CLI_OPTIONS.has(flag)) {
      out.words.push(arg);
      continue;
    }
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
      case '-u':
        out.user = takeValue();
        break;
      case '--since':
        out.since = takeValue();
        break;
      default:
        throw new OpsError(ErrorCode.UsageError, { message: t.unknownFlag(flag), usage: 'queue-ops --help' });
    }
  }
  return out;
}

/** `--json` anywhere before `--`, found even when the rest of the line does not parse. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}
