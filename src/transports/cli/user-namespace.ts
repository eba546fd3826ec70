import { readFileSync } from 'node:fs';
import { ErrorCode, OpsError } from '../../errors.js';
import { factsOf } from '../../verbs.js';

/** The initial user namespace's map: ids 0… map to themselves, all 4294967295 of them. */
const WHOLE_SYSTEM = '0 0 4294967295';

const readOwnUidMap = () => readFileSync('/proc/self/uid_map', 'utf8');

/**
 * This process's uid map when it is not the initial user namespace's (`0 0 1`, one row per
 * line joined by `, `), else undefined. Inside a namespace any account can be `root` on a host
 * name of its choice (`unshare -r -u`, unprivileged on Debian by default), so the OS account and
 * host the command line reads say nothing about who typed. Without /proc (not Linux, no user
 * namespaces) there is nothing to tell.
 */
export function userNamespaceMap(read: () => string = readOwnUidMap): string | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const rows = text
    .split('\n')
    .map((line) => line.trim().split(/\s+/).join(' '))
    .filter((line) => line !== '');
  return rows.length === 1 && rows[0] === WHOLE_SYSTEM ? undefined : rows.join(', ');
}

/**
 * The refusal of a command that changes something or approves (its descriptor says `mutating`)
 * typed inside a user namespace, or undefined: reads still answer there, since they claim nobody.
 */
export function namespaceRefusal(words: readonly string[], read?: () => string): OpsError | undefined {
  const verb = words[0];
  if (verb === undefined || factsOf(verb)?.mutating !== true) return undefined;
  const uidMap = userNamespaceMap(read);
  return uidMap === undefined ? undefined : new OpsError(ErrorCode.UserNamespace, { verb, uidMap });
}
