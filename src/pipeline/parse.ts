import type { QueueBackend } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { rankBySimilarity, suggest, suggestFlag } from '../lib/suggest.js';
import type { CommandContext } from './types.js';

/** The verb (lower-cased) and the remaining words of one command line. */
export interface ParsedCommand {
  verb: string;
  args: string[];
}

/** Quote pairs people actually type; Slack on macOS turns `"` into curly quotes. */
const CLOSING: Record<string, string> = { '"': '"', "'": "'", '“': '”', '‘': '’', '„': '“' };

/**
 * Splits a command line into words. Double or single quotes (straight or curly) group words;
 * inside double quotes a backslash escapes the next character. An unclosed quote is a usage
 * error rather than a guess.
 */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const closing = CLOSING[ch];
    if (closing !== undefined) {
      inWord = true;
      let end = i + 1;
      for (; end < text.length && text[end] !== closing; end++) {
        if (ch === '"' && text[end] === '\\' && end + 1 < text.length) end++;
      }
      if (end >= text.length)
        throw new OpsError(ErrorCode.UsageError, { message: messages().commands.quoteNotClosed(ch) });
      const quoted = text.slice(i + 1, end);
      current += ch === '"' ? quoted.replace(/\\(.)/g, '$1') : quoted;
      i = end;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

/**
 * The longest word any command takes. Nothing real is longer (a queue name, a request id, a
 * reason's word), and every lookup and "did you mean" ranking costs more the longer the word, so
 * a longer word is refused before any of them runs.
 */
export const MAX_WORD_LENGTH = 256;

/** Throws `BadArgument` naming the limit when a word is longer than {@link MAX_WORD_LENGTH}. */
export function assertWordLengths(words: readonly string[]): void {
  const long = words.find((w) => w.length > MAX_WORD_LENGTH);
  if (long === undefined) return;
  throw new OpsError(ErrorCode.BadArgument, {
    message: messages().commands.wordTooLong(long.length),
    valid: messages().commands.wordLengthValid(MAX_WORD_LENGTH),
  });
}

/** Words → verb and arguments. No words at all means `help`. */
export function parseWords(words: readonly string[]): ParsedCommand {
  const [first, ...rest] = words.filter((w) => w !== '');
  if (first === undefined) return { verb: 'help', args: [] };
  return { verb: first.toLowerCase(), args: rest };
}

/** `system` or `system/queue`, before checking either exists. */
export interface Target {
  system: string;
  queue?: string;
}

/**
 * Splits `system/queue` on the first `/` only: a Celery queue may be `celery:alarm_processing`,
 * and a BullMQ queue name may in principle contain anything but the system name cannot.
 */
export function parseTarget(text: string): Target {
  // `status --jsn`: a mistyped option, not a system called `--jsn`.
  if (text.startsWith('--')) {
    throw new OpsError(ErrorCode.BadArgument, {
      message: messages().commands.unknownOption(text, suggestFlag(text)),
      valid: messages().commands.targetValid,
    });
  }
  const slash = text.indexOf('/');
  if (slash === -1) {
    if (!text) throw new OpsError(ErrorCode.BadArgument, { message: messages().commands.nameTarget });
    return { system: text };
  }
  const system = text.slice(0, slash);
  const queue = text.slice(slash + 1);
  if (!system || !queue) {
    throw new OpsError(ErrorCode.BadArgument, {
      message: messages().commands.notATarget(text),
      valid: messages().commands.targetValid,
    });
  }
  return { system, queue };
}

/** A target checked against config and the live queue list. */
export interface ResolvedTarget {
  system: string;
  backend: QueueBackend;
  queue?: string;
}

/** At most this many names are listed in an "unknown …" answer; the closest ones first. */
const MAX_LISTED = 20;

function listed(input: string, names: readonly string[]): string[] {
  if (names.length <= MAX_LISTED) return [...names];
  const closest = rankBySimilarity(input, names).slice(0, MAX_LISTED);
  return [...closest, messages().commands.moreNames(names.length - MAX_LISTED)];
}

/** Every configured system with its backend, in config order. */
export function allSystems(ctx: CommandContext): { system: string; backend: QueueBackend }[] {
  return ctx.backends.names().map((name) => ({ system: name, backend: ctx.backends.get(name)! }));
}

/**
 * Finds the backend for a system name (exact, else a unique case-insensitive match), or throws
 * `UnknownSystem` naming the valid systems and the likely one.
 */
export function resolveSystem(
  ctx: Pick<CommandContext, 'backends'>,
  name: string,
): { system: string; backend: QueueBackend } {
  const names = ctx.backends.names();
  const exact = ctx.backends.get(name);
  if (exact) return { system: name, backend: exact };
  const folded = names.filter((n) => n.toLowerCase() === name.toLowerCase());
  if (folded.length === 1) return { system: folded[0]!, backend: ctx.backends.get(folded[0]!)! };
  throw new OpsError(ErrorCode.UnknownSystem, {
    system: name,
    valid: listed(name, names),
    suggestion: suggest(name, names),
  });
}

/**
 * Resolves `system[/queue]`. The queue must be one the backend lists (from config, or discovered
 * in Redis; discovery may throw `RedisUnavailable`). Queue names are matched exactly: they are
 * Redis keys, and `Events` is not `events`.
 */
export async function resolveTarget(ctx: CommandContext, target: Target): Promise<ResolvedTarget> {
  let resolved: { system: string; backend: QueueBackend };
  try {
    resolved = resolveSystem(ctx, target.system);
  } catch (error) {
    // `status alarm_processing`: a queue named without its system; say which system has it.
    const unknown = error instanceof OpsError && error.code === ErrorCode.UnknownSystem;
    if (!unknown || target.queue !== undefined || error.params.suggestion !== undefined) throw error;
    const found = await queueAnywhere(ctx, target.system);
    if (found === undefined) throw error;
    throw new OpsError(ErrorCode.UnknownSystem, { ...error.params, suggestion: found });
  }
  const { system, backend } = resolved;
  if (target.queue === undefined) return { system, backend };
  // A queue created since the last discovery is looked for at once, as the backend's own calls do.
  const queues = await backend.listQueues([target.queue]);
  if (!queues.includes(target.queue)) {
    throw new OpsError(ErrorCode.UnknownQueue, {
      system,
      queue: target.queue,
      valid: listed(target.queue, queues),
      // The whole `system/queue`, so the suggestion can be typed as it is.
      suggestion: withSystem(system, suggest(target.queue, queues)),
    });
  }
  return { system, backend, queue: target.queue };
}

const withSystem = (system: string, queue: string | undefined) =>
  queue === undefined ? undefined : `${system}/${queue}`;

/**
 * `system/queue` of the one queue, across every system, that is `name` or is named like it
 * (`alarm_processing` → `zeus/celery:alarm_processing`); undefined when none or several are. A
 * system whose queues cannot be listed (Redis down) is passed over.
 */
export async function queueAnywhere(ctx: CommandContext, name: string): Promise<string | undefined> {
  const found: string[] = [];
  await Promise.all(
    allSystems(ctx).map(async ({ system, backend }) => {
      let queues: string[];
      try {
        queues = await askSystem(ctx, system, backend.listQueues([name]));
      } catch {
        return;
      }
      const queue = queues.includes(name) ? name : suggest(name, queues);
      if (queue !== undefined) found.push(`${system}/${queue}`);
    }),
  );
  return found.length === 1 ? found[0] : undefined;
}

/**
 * The usage error of a command that needs `system/queue` and was given one word: when that word
 * is a queue of exactly one system, the answer names it (`Did you mean zeus/celery:alarm_processing?`).
 */
export async function queueMissing(
  ctx: CommandContext,
  word: string,
  message: string,
  usage: string,
): Promise<OpsError> {
  const found = word ? await queueAnywhere(ctx, word) : undefined;
  return new OpsError(ErrorCode.UsageError, {
    message: found === undefined ? message : `${message} ${messages().commands.didYouMean(found)}`,
    usage,
  });
}

/**
 * The one word of a verb about a whole system (`redis pushizo`, `results zeus`): the system it
 * names (`system/queue` names its system), or a usage error naming `usage`.
 */
export function systemArgument(
  ctx: Pick<CommandContext, 'backends'>,
  args: readonly string[],
  usage: string,
): { system: string; backend: QueueBackend } {
  const t = messages();
  if (args.length === 0) throw new OpsError(ErrorCode.UsageError, { message: t.commands.nameTarget, usage });
  if (args.length > 1)
    throw new OpsError(ErrorCode.UsageError, { message: t.commands.tooManyArguments(args[1]!), usage });
  return resolveSystem(ctx, args[0]!.split('/', 1)[0]!);
}
