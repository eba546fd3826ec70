import { randomBytes } from 'node:crypto';

/** A short id that ties a "something went wrong" answer to its log line. */
export function newRef(): string {
  return randomBytes(4).toString('hex');
}
