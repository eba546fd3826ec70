import { hash } from 'node:crypto';

/**
 * The archive line of a Celery purge, shared by its purge (purge.ts) and its undo
 * (purge-restore.ts): what a line holds, the message it names, and the identity a delete compares.
 */

// crypto.hash (Node 20.12, the engines floor): a third of createHash's cost on a message this size.
export const sha1 = (data: string | Buffer) => hash('sha1', data, 'hex');

/**
 * What an archived line holds: a broker message and its list (`m`, the message as text; `b`,
 * its bytes in base64 when they are not UTF-8, so that they come back exactly and keep the
 * identity the delete compared), or a result key and its value.
 */
export type CeleryLine =
  | { l: string; m: string }
  | { l: string; b: string }
  | { k: string; v: string; t: number; a: number };

/** The message of a line, as the bytes (or the text) it was in the list. */
export const messageOf = (record: { m: string } | { b: string }): string | Buffer =>
  'b' in record ? Buffer.from(record.b, 'base64') : record.m;

/** A preview's sample entry from one archive line: the task's name and age, never its data. */
export function sampleOf(record: CeleryLine, at: number): { name: string; ageSeconds: number | null } {
  if ('k' in record) {
    try {
      const meta = JSON.parse(record.v) as { name?: unknown; date_done?: unknown };
      const done =
        typeof meta.date_done === 'string' ? Date.parse(`${meta.date_done.replace(/Z?$/, 'Z')}`) : Number.NaN;
      return {
        name: typeof meta.name === 'string' ? meta.name : '',
        ageSeconds: Number.isFinite(done) ? Math.max(0, Math.floor((at - done) / 1000)) : null,
      };
    } catch {
      return { name: '', ageSeconds: null };
    }
  }
  try {
    const message = JSON.parse(messageOf(record).toString()) as { headers?: { task?: unknown } };
    // Messages carry no enqueue time: the age is unknown, not guessed.
    return { name: typeof message.headers?.task === 'string' ? message.headers.task : '', ageSeconds: null };
  } catch {
    return { name: '', ageSeconds: null };
  }
}
