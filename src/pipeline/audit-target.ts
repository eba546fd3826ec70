import { isOpsError } from '../errors.js';
import { MAX_WORD_LENGTH, parseTarget, parseWords } from './parse.js';

/**
 * What an audit entry names as a command's target: the first argument as the command itself
 * parses it (`/queue pause "" s/q` → `s/q`, not `""`), written as `system/queue` or `system`
 * (a request id, a count). Undefined when there is no argument or it is not a target at all
 * (`/q`). Never longer than a word may be: the guards record denials before the dispatcher
 * refuses long words.
 */
export function auditTarget(words: readonly string[]): string | undefined {
  const first = parseWords(words).args[0];
  if (first === undefined) return undefined;
  try {
    const target = parseTarget(first);
    const text = target.queue === undefined ? target.system : `${target.system}/${target.queue}`;
    return text.slice(0, MAX_WORD_LENGTH);
  } catch (error) {
    if (isOpsError(error)) return undefined;
    throw error;
  }
}

/** The arguments as the command receives them (empty words dropped), each cut to a word's limit. */
export function auditArgs(words: readonly string[]): string[] {
  return parseWords(words).args.map((a) => a.slice(0, MAX_WORD_LENGTH));
}
