import { closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { canonicalJson } from '../store/audit-hash.js';
import type { AuditEntry } from '../store/store.js';

/** What a witness remembers of one entry: enough to tell whether the store still holds it unchanged. */
export interface WitnessHead {
  seq: number;
  hash: string;
  at?: string;
  keyId?: string;
}

/**
 * A copy of the chain's head kept somewhere a database writer cannot reach. `audit verify` reads the
 * newest head of every witness before the store, and the store must still hold that seq with that
 * hash: entries removed from the end, or a chain rewritten from some entry on, no longer match.
 */
export interface AuditWitness {
  /** `file` (audit.witnessFile) or `channel` (slack.auditChannel); `where` is the path or channel. */
  readonly kind: 'file' | 'channel';
  readonly where: string;
  /** Called with each entry once it is stored, awaited before the entry's caller is answered. */
  record?(entry: AuditEntry): Promise<void>;
  /** The head with the highest seq this witness holds; undefined when it holds none yet. */
  newestHead(): Promise<WitnessHead | undefined>;
}

/** One line of the witness file for an entry: `{"at":…,"hash":…,"keyId":…,"seq":…}`. */
export function witnessLine(entry: AuditEntry): string {
  return canonicalJson({ seq: entry.seq, hash: entry.hash, at: entry.at, keyId: entry.keyId });
}

function parseHead(line: string): WitnessHead | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const v = value as Partial<WitnessHead> | null;
  if (!v || !Number.isSafeInteger(v.seq) || (v.seq as number) < 1) return undefined;
  if (typeof v.hash !== 'string' || !/^[0-9a-f]{64}$/.test(v.hash)) return undefined;
  return {
    seq: v.seq as number,
    hash: v.hash,
    ...(typeof v.at === 'string' ? { at: v.at } : {}),
    ...(typeof v.keyId === 'string' ? { keyId: v.keyId } : {}),
  };
}

/**
 * The head with the highest seq among the lines of `text` (the end of a witness file). Several
 * processes append to one file, so lines may be slightly out of order: the highest seq wins, not
 * the last line. `partialFirst` says the text starts mid-line (it is a tail), so its first line is
 * skipped; a line cut short by a crash simply does not parse.
 */
export function newestWitnessHead(text: string, partialFirst: boolean): WitnessHead | undefined {
  const lines = text.split('\n');
  if (partialFirst) lines.shift();
  let newest: WitnessHead | undefined;
  for (const line of lines) {
    const head = line.trim() ? parseHead(line) : undefined;
    if (head && (!newest || head.seq > newest.seq)) newest = head;
  }
  return newest;
}

/** How much of the file's end is read for its newest head: many entries' worth of lines. */
const TAIL_BYTES = 64 * 1024;

/**
 * `audit.witnessFile`: one JSON line per entry, only ever appended to. Only the end of the file is
 * read, so a file of millions of lines costs one small read.
 */
export function createWitnessFile(path: string): AuditWitness {
  let dirMade = false;
  return {
    kind: 'file',
    where: path,
    async record(entry) {
      if (!dirMade) {
        mkdirSync(dirname(path), { recursive: true });
        dirMade = true;
      }
      // One write of one short line with O_APPEND: lines from several processes never interleave.
      await appendFile(path, `${witnessLine(entry)}\n`, { flag: 'a', mode: 0o640 });
    },
    async newestHead() {
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch (error) {
        if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
        throw error;
      }
      try {
        const size = fstatSync(fd).size;
        const start = Math.max(0, size - TAIL_BYTES);
        const buffer = Buffer.alloc(size - start);
        readSync(fd, buffer, 0, buffer.length, start);
        return newestWitnessHead(buffer.toString('utf8'), start > 0);
      } finally {
        closeSync(fd);
      }
    },
  };
}
