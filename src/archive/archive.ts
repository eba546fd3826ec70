import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { ErrorCode, OpsError } from '../errors.js';
import { type Compressed, gzipInBackground } from './compressor.js';

/**
 * A purge's archive on disk: `<dir>/<purgeId>/chunk-000001.jsonl.gz …` (gzip JSON lines, one
 * record per line) and `manifest.json` with the counts and a sha256 of each file. A chunk file is
 * written to a temporary name, fsynced, then renamed, so a file under its final name is always
 * whole; the jobs it holds leave Redis only after that.
 */
export interface ArchiveFile {
  name: string;
  /** Records in the file. */
  records: number;
  /** Of those, how many were removed from Redis (the others had moved and were left alone). */
  purged: number;
  /** Identities of records that were not removed (a worker took them first); undo skips them. */
  skipped: string[];
  sha256: string;
  bytes: number;
}

export interface ArchiveManifest {
  version: 1;
  purgeId: string;
  system: string;
  type: string;
  queue: string;
  states: string[];
  createdAt: string;
  finishedAt?: string;
  files: ArchiveFile[];
  counts: { archived: number; purged: number; skipped: number };
  /** Backend-specific facts needed to restore (BullMQ prefix, Celery key layout). */
  meta?: Record<string, unknown>;
}

export const MANIFEST = 'manifest.json';

/** Records per chunk file, unless a purge is told otherwise. */
export const CHUNK_RECORDS = 10_000;

/**
 * About how many bytes the manifest of an archive of `files` chunk files takes: one written the
 * way {@link writeManifest} writes it, with placeholders as long as the real values.
 */
export function manifestBytesFor(files: number): number {
  const at = new Date(0).toISOString();
  const manifest: ArchiveManifest = {
    version: 1,
    purgeId: 'r-0000000000000000',
    system: 'system',
    type: 'bullmq',
    queue: 'queue-name',
    states: ['waiting'],
    createdAt: at,
    finishedAt: at,
    files: Array.from({ length: files }, (_, i) => ({
      name: chunkName(i + 1),
      records: CHUNK_RECORDS,
      purged: CHUNK_RECORDS,
      skipped: [],
      sha256: '0'.repeat(64),
      bytes: 1_000_000,
    })),
    counts: { archived: files * CHUNK_RECORDS, purged: files * CHUNK_RECORDS, skipped: 0 },
    meta: { prefix: 'bull' },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`.length;
}

/** `chunk-000001.jsonl.gz`: sortable, so the order jobs were archived in is the file order. */
export function chunkName(seq: number): string {
  return `chunk-${String(seq).padStart(6, '0')}.jsonl.gz`;
}

export function archivePathFor(dir: string, purgeId: string): string {
  return resolve(dir, purgeId);
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `data` under `name` in `dir` durably: temp file, fsync, rename, fsync of the directory. */
async function writeDurably(dir: string, name: string, data: Buffer | string): Promise<void> {
  const temp = join(dir, `.${name}.tmp`);
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, join(dir, name));
  await fsyncPath(dir);
}

/** Creates the archive directory of one purge (0700: it holds job payloads). */
export async function createArchiveDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
}

/**
 * Writes one chunk of JSON lines, gzip level 1 on a low-priority thread (see compressor.ts).
 * Resolves only once the file is on disk under its final name.
 */
export async function writeChunk(path: string, seq: number, lines: readonly string[]): Promise<ChunkFile> {
  return await writeChunkBlocks(path, seq, [linesBlock(lines)], lines.length);
}

/**
 * {@link writeChunk} for lines already encoded: `blocks` are JSON lines, each ending with a
 * newline, `records` lines in all (what a purger's read returns, written without decoding).
 * The blocks are given up: their memory goes to the compressor thread (see gzipInBackground).
 */
export async function writeChunkBlocks(
  path: string,
  seq: number,
  blocks: readonly Buffer[],
  records: number,
): Promise<ChunkFile> {
  return await writeCompressedChunk(path, seq, compressChunk(blocks), records);
}

/** What a chunk file written under its final name is: the store and the manifest record it. */
export interface ChunkFile {
  name: string;
  sha256: string;
  bytes: number;
  records: number;
}

/**
 * Starts compressing one chunk's blocks (given up, as for {@link writeChunkBlocks}) on the
 * compressor thread, in the order chunks are given: a purge compresses its next chunk while the
 * one before is still being written and fsynced. Nothing is on disk until
 * {@link writeCompressedChunk}.
 */
export function compressChunk(blocks: readonly Buffer[]): Promise<Compressed> {
  const compressed = gzipInBackground(blocks);
  // Awaited by writeCompressedChunk, possibly only after the chunk before it is on disk: a
  // failure meanwhile must not count as unhandled (which ends a Node process). Awaiting it throws.
  compressed.catch(() => undefined);
  return compressed;
}

/**
 * Writes a compressed chunk under its final name, durably (temp file, fsync, rename, fsync of the
 * directory). Resolves only once the file is on disk: its jobs may leave Redis after that.
 */
export async function writeCompressedChunk(
  path: string,
  seq: number,
  compressed: Promise<Compressed> | Compressed,
  records: number,
): Promise<ChunkFile> {
  const name = chunkName(seq);
  const { body, sha256 } = await compressed;
  await writeDurably(path, name, body);
  return { name, sha256, bytes: body.length, records };
}

/**
 * The lines of blocks of whole lines, each ending with its newline (views, not copies). JSON
 * lines hold no raw newline, so a newline always ends a line.
 */
export function splitBlocks(blocks: readonly Buffer[]): Buffer[] {
  const lines: Buffer[] = [];
  for (const block of blocks) {
    let from = 0;
    for (let at = block.indexOf(10); at !== -1; at = block.indexOf(10, from)) {
      lines.push(block.subarray(from, at + 1));
      from = at + 1;
    }
  }
  return lines;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = Buffer.from('0123456789abcdef');
/**
 * What a byte becomes in a JSON string after its backslash: 0 for a byte that stays as it is, the
 * letter of JSON.stringify's short escapes for `"`, `\\` and \b \t \n \f \r, and 1 for the other
 * controls (`\u00xx`).
 */
const ESCAPE = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte++) ESCAPE[byte] = 1;
ESCAPE[QUOTE] = QUOTE;
ESCAPE[BACKSLASH] = BACKSLASH;
ESCAPE[8] = 0x62; // \b
ESCAPE[9] = 0x74; // \t
ESCAPE[10] = 0x6e; // \n
ESCAPE[12] = 0x66; // \f
ESCAPE[13] = 0x72; // \r

/**
 * Non-zero when one of the four bytes of `word` (little-endian) needs escaping: one below 0x20,
 * `"` or `\\` (the bit tricks "has a byte less than n" and "has a zero byte", the latter on the
 * word xor-ed with the byte repeated), with bit 7 of that byte set. A byte of 0x80 or more never
 * counts: UTF-8 is copied as it is.
 */
function wordNeedsEscape(word: number): number {
  const quotes = word ^ 0x22222222;
  const backslashes = word ^ 0x5c5c5c5c;
  return (
    (((word - 0x20202020) & ~word) |
      ((quotes - 0x01010101) & ~quotes) |
      ((backslashes - 0x01010101) & ~backslashes)) &
    0x80808080
  );
}

/** One byte of a JSON string's content written at `at` in `out`, escaped if it must be; returns the end. */
function escapeByte(byte: number, out: Buffer, at: number): number {
  const after = ESCAPE[byte]!;
  if (after === 0) {
    out[at] = byte;
    return at + 1;
  }
  out[at++] = BACKSLASH;
  if (after !== 1) {
    out[at] = after;
    return at + 1;
  }
  // \u00XX, lower-case hex as JSON.stringify writes it.
  out[at++] = 0x75;
  out[at++] = 0x30;
  out[at++] = 0x30;
  out[at++] = HEX[byte >> 4]!;
  out[at] = HEX[byte & 15]!;
  return at + 1;
}

/**
 * `source[start, end)`, valid UTF-8, written at `at` in `out` as a JSON string's content (escaped
 * as JSON.stringify does, without the quotes), returning the end. A byte at a time: for the short
 * fields of a job's hash this beats LineWriter's four bytes at a time, whose set-up per string
 * costs more than the string.
 */
export function escapeJsonBytes(source: Buffer, start: number, end: number, out: Buffer, at: number): number {
  let o = at;
  for (let i = start; i < end; i++) {
    const byte = source[i]!;
    if (ESCAPE[byte] === 0) out[o++] = byte;
    else o = escapeByte(byte, out, o);
  }
  return o;
}

/**
 * `bytes` copied into `out` at `at`, returning the end. A line's head and tail are a few dozen
 * bytes: a loop is cheaper than encoding a string or calling into `Buffer.copy` twice a line,
 * which at a million lines was a tenth of a Celery purge's main thread.
 */
function copyShort(bytes: Buffer, out: Buffer, at: number): number {
  if (bytes.length > 64) return at + bytes.copy(out, at);
  for (let i = 0; i < bytes.length; i++) out[at + i] = bytes[i]!;
  return at + bytes.length;
}

/**
 * Lines encoded straight into large buffers, one write each: several times cheaper than joining
 * them into one string and encoding that (V8 flattens and re-scans a string that large). Bytes
 * that are already what the line holds (JSON Redis wrote) are copied, never decoded.
 */
export class LineWriter {
  private readonly done: Buffer[] = [];
  private block = Buffer.allocUnsafe(0);
  /** A view of `block`'s memory, for writes of four bytes at once. */
  private view = new DataView(this.block.buffer);
  private at = 0;
  /**
   * A view of the memory the last source was in, for reads of four bytes at once. The messages of
   * one read are slices of a few socket reads: a view is made a few times a read, not a message.
   */
  private sourceMemory: ArrayBufferLike | undefined;
  private sourceView: DataView | undefined;

  /**
   * `expectedBytes`: about what the lines will take. A batch's buffer is sized to it, not to a
   * fixed megabyte: thousands of batches a second each allocating far more than they use was
   * most of a purge's garbage collection (memory outside the heap still counts towards it).
   */
  constructor(private readonly expectedBytes = 1 << 20) {}

  private room(bytes: number): void {
    if (this.at + bytes <= this.block.length) return;
    if (this.at > 0) this.done.push(this.block.subarray(0, this.at));
    this.block = Buffer.allocUnsafe(Math.max(this.expectedBytes, bytes));
    this.view = new DataView(this.block.buffer);
    this.at = 0;
  }

  write(line: string): void {
    // At most 3 bytes of UTF-8 per UTF-16 unit.
    this.room(line.length * 3);
    this.at += this.block.write(line, this.at);
  }

  /**
   * One line: `head`, then `source[start, end)` as it is, then `tail` (which ends the line). Room
   * is made for all three at once: a line never spans two buffers (see splitBlocks).
   */
  writeAround(head: string, source: Buffer, start: number, end: number, tail: string): void {
    this.room((head.length + tail.length) * 3 + (end - start));
    this.at += this.block.write(head, this.at);
    this.at += source.copy(this.block, this.at, start, end);
    this.at += this.block.write(tail, this.at);
  }

  /**
   * One line: `head`, then the UTF-8 text `source` as a JSON string (quoted and escaped), then
   * `tail`. The bytes are escaped as they are, never decoded to a string and encoded back: for a
   * Celery message that was most of the client's time in a purge. The result is byte for byte
   * what `JSON.stringify(source.toString())` gives (its short escapes, `\u00xx` for the other
   * controls, non-ASCII as is); `source` must be valid UTF-8 (`isUtf8`), where that holds.
   */
  writeJsonString(head: Buffer, source: Buffer, tail: Buffer): void {
    // Worst case: every byte a control character, six bytes each.
    this.beginLine(head.length + tail.length + source.length * 6 + 2);
    this.put(head);
    this.putJsonString(source, 0, source.length);
    this.put(tail);
  }

  /**
   * Makes room for a line of at most `maxBytes`, written next by {@link put} and
   * {@link putJsonString}: a line never spans two buffers (see splitBlocks), so its whole worst
   * case is made room for before its first byte.
   */
  beginLine(maxBytes: number): void {
    this.room(maxBytes);
  }

  /**
   * The buffer a line begun is written in, and where: for a caller that writes a line of many
   * small pieces itself (an archive line from a job's hash) and hands the end back with
   * {@link endLine}. Within the room `beginLine` made.
   */
  get lineBuffer(): Buffer {
    return this.block;
  }

  get linePosition(): number {
    return this.at;
  }

  endLine(at: number): void {
    this.at = at;
  }

  /** `text` as UTF-8, within the line begun (at most three bytes a UTF-16 unit). */
  putText(text: string): void {
    this.at += this.block.write(text, this.at);
  }

  /** `bytes` as they are, within the line begun. */
  put(bytes: Buffer): void {
    this.at = copyShort(bytes, this.block, this.at);
  }

  /**
   * `source[start, end)`, valid UTF-8, as a JSON string (quoted and escaped, as writeJsonString),
   * within the line begun: at most `(end - start) * 6 + 2` bytes.
   */
  putJsonString(source: Buffer, start: number, end: number): void {
    const out = this.block;
    let at = this.at;
    out[at++] = QUOTE;
    // Four bytes at a time: a kombu envelope is mostly base64 and ids, and a byte-by-byte loop
    // over all of it was the largest part of a Celery purge's main thread. A word holding a byte to
    // escape is written whole all the same (the room made covers it), then the write goes on
    // from its first such byte, which is escaped: the bytes after it are read again.
    if (source.buffer !== this.sourceMemory || !this.sourceView) {
      this.sourceMemory = source.buffer;
      this.sourceView = new DataView(source.buffer);
    }
    const input = this.sourceView;
    const output = this.view;
    const from = source.byteOffset;
    const to = out.byteOffset;
    let i = start;
    while (i + 4 <= end) {
      const word = input.getUint32(from + i, true) | 0;
      const flagged = wordNeedsEscape(word);
      output.setUint32(to + at, word, true);
      if (flagged === 0) {
        at += 4;
        i += 4;
        continue;
      }
      // The lowest flagged byte is exact (a borrow only ever runs upwards from it).
      const first = (31 - Math.clz32(flagged & -flagged)) >> 3;
      at = escapeByte(source[i + first]!, out, at + first);
      i += first + 1;
    }
    for (; i < end; i++) at = escapeByte(source[i]!, out, at);
    out[at++] = QUOTE;
    this.at = at;
  }

  blocks(): Buffer[] {
    return this.at > 0 ? [...this.done, this.block.subarray(0, this.at)] : this.done;
  }
}

/** Lines as the archive stores them: UTF-8, each ending with a newline. */
function linesBlock(lines: readonly string[]): Buffer {
  return Buffer.from(lines.length ? `${lines.join('\n')}\n` : '');
}

export async function writeManifest(path: string, manifest: ArchiveManifest): Promise<void> {
  await writeDurably(path, MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The manifest, or an OpsError naming what is wrong with it. */
export async function readManifest(path: string): Promise<ArchiveManifest> {
  let text: string;
  try {
    text = await readFile(join(path, MANIFEST), 'utf8');
  } catch {
    throw new OpsError(ErrorCode.ArchiveInvalid, { path, file: MANIFEST, problem: 'missing' });
  }
  try {
    const manifest = JSON.parse(text) as ArchiveManifest;
    if (manifest.version !== 1 || !Array.isArray(manifest.files)) throw new Error('shape');
    return manifest;
  } catch {
    throw new OpsError(ErrorCode.ArchiveInvalid, { path, file: MANIFEST, problem: 'unreadable' });
  }
}

/** sha256 of a file, streamed. */
async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Checks every file the manifest lists against its sha256. The first file that is missing or
 * differs is named in the error: undo must not restore from an archive it cannot trust.
 */
export async function verifyArchive(path: string, manifest: ArchiveManifest): Promise<void> {
  for (const file of manifest.files) {
    let actual: string;
    try {
      actual = await sha256Of(join(path, file.name));
    } catch {
      throw new OpsError(ErrorCode.ArchiveInvalid, { path, file: file.name, problem: 'missing' });
    }
    if (actual !== file.sha256)
      throw new OpsError(ErrorCode.ArchiveInvalid, { path, file: file.name, problem: 'checksum' });
  }
}

/** The lines of one chunk, in the order they were archived. */
export async function readChunk(path: string, name: string): Promise<string[]> {
  const lines: string[] = [];
  const input = createReadStream(join(path, name)).pipe(createGunzip());
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }))
    if (line !== '') lines.push(line);
  return lines;
}

/** Chunk files present on disk (complete ones only: temp files start with a dot). */
export async function listChunkFiles(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).filter((n) => /^chunk-\d+\.jsonl\.gz$/.test(n)).sort();
  } catch {
    return [];
  }
}

export async function removeFile(path: string, name: string): Promise<void> {
  await rm(join(path, name), { force: true });
}

/** Archive directories under `dir` whose manifest (or directory) is older than `cutoff`. */
export async function archivesOlderThan(dir: string, cutoff: Date): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const info = await stat(path);
      if (!info.isDirectory()) continue;
      let at = info.mtime;
      try {
        const manifest = JSON.parse(await readFile(join(path, MANIFEST), 'utf8')) as ArchiveManifest;
        at = new Date(manifest.finishedAt ?? manifest.createdAt);
      } catch {
        // No manifest (a purge still running has one only at the end): the directory's time.
      }
      if (at.getTime() < cutoff.getTime()) out.push(name);
    } catch {
      // Vanished meanwhile.
    }
  }
  return out.sort();
}

export async function removeArchive(dir: string, name: string): Promise<void> {
  await rm(join(dir, name), { recursive: true, force: true });
}
