import { createHash } from 'node:crypto';
import type { Fix } from './types.js';

/** A fix as typed after `/queue`. */
export const fixCommand = (fix: Fix): string => fix.words.join(' ');

/**
 * A fix's key: 12 hexadecimal characters of the hash of its command. A fix button carries only
 * this and the scope of its `why`; the click recomputes the diagnosis and runs the fix whose key
 * it is, so a command never travels in a button's value.
 */
export function fixKey(fix: Fix): string {
  return createHash('sha256').update(fixCommand(fix)).digest('hex').slice(0, 12);
}
