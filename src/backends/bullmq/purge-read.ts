import { isUtf8 } from 'node:buffer';
import { escapeJsonBytes, LineWriter } from '../../archive/archive.js';
import type { PurgeBatch } from '../queue-backend.js';
import { encodeCommands, errorText, type RawPipe, respInteger } from '../raw-pipe.js';

const CR = 13;
const MINUS = 45;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const SCORE = Buffer.from(',"s":');
const NULL = Buffer.from('null');
const FIELDS = Buffer.from(',"j":{"fields":[');
const LINE_END = Buffer.from('],"logs":[]}}\n');

/** Jobs asked in a purge's first call, before their size is known: one, so that a queue of huge jobs is never asked for many at once. */
const FIRST_CALL = 1;

/** What a purger has learnt of its jobs' size, to size each call of the next read. */
export interface HashSizes {
  bytesPerJob: number | undefined;
}

/**
 * A batch's archive lines from each job's hash, read through `pipe` as pipelined HGETALLs: Redis
 * spends about 2 µs a job on them, against 6 for the same HGETALL inside a script (converting its
 * reply into Lua strings and a table, then cjson), and each reply is copied into its line as the
 * bytes Redis sent, escaped as JSON on the way, never decoded. The lines are what
 * `batchOfReply` writes from READ_SELECTED's reply:
 * `{"p":place,"id":…,"s":score|null,"j":{"fields":[f1,v1,…],"logs":[]}}`.
 *
 * `ids` (and `scores` for a zset) are the batch in walk order, read beforehand on the purge's own
 * connection, in order with its deletes; the hashes are the same whichever connection reads
 * them. A job without a hash (removed since, a legacy `0:` marker) is left out, as READ_SELECTED
 * does. Calls stop, after at least one job, once the hashes pass `budget` bytes: each call asks for
 * as many jobs as the size seen so far says fit, so a batch of big jobs stays a few short calls
 * and never a reply of hundreds of megabytes in Redis' output buffer.
 *
 * Undefined when some job of the batch has logs (one EXISTS over the batch, sent with the first
 * call; almost no job has any): the caller reads that batch through Lua, which puts them in.
 */
export async function readHashesThroughPipe(
  pipe: RawPipe,
  options: {
    base: string;
    placeName: string;
    ids: readonly string[];
    scores: readonly string[] | undefined;
    budget: number;
    sizes: HashSizes;
  },
): Promise<PurgeBatch | undefined> {
  const { base, ids, scores, budget, sizes } = options;
  const lines = new LineWriter(Math.min(budget, ids.length * (sizes.bytesPerJob ?? 256)) * 2 + 4096);
  const head = Buffer.from(`{"p":${JSON.stringify(options.placeName)},"id":`);
  const taken: { identity: string }[] = [];
  let hasLogs = false;
  let bytes = 0;
  let next = 0;
  while (next < ids.length && bytes < budget) {
    const perJob = sizes.bytesPerJob;
    const count =
      perJob === undefined
        ? Math.min(FIRST_CALL, ids.length - next)
        : Math.max(1, Math.min(ids.length - next, Math.floor((budget - bytes) / Math.max(perJob, 1))));
    const commands: string[][] = [];
    const first = next === 0;
    if (first) commands.push(['EXISTS', ...ids.map((id) => `${base}${id}:logs`)]);
    for (let i = next; i < next + count; i++) commands.push(['HGETALL', base + ids[i]!]);
    let at = next;
    let callBytes = 0;
    let skipExists = first;
    await pipe.send(encodeCommands(commands), commands.length, (buffer, start, end) => {
      if (buffer[start] === MINUS) throw new Error(errorText(buffer, start, end));
      if (skipExists) {
        skipExists = false;
        hasLogs = respInteger(buffer, start + 1, buffer.indexOf(CR, start)) > 0;
        return;
      }
      const index = at++;
      callBytes += end - start;
      // Past the budget, the rest of this call's replies are read and dropped: the batch ends here.
      if (hasLogs || bytes + callBytes - (end - start) >= budget) return;
      if (writeLine(lines, buffer, start, end, head, ids[index]!, scores?.[index]))
        taken.push({ identity: ids[index]! });
    });
    if (hasLogs) return undefined;
    bytes += callBytes;
    sizes.bytesPerJob = Math.ceil(callBytes / count);
    next += count;
  }
  return { items: taken, lines: lines.blocks() };
}

/**
 * One job's line from its HGETALL reply at `buffer[start, end)`; false for an empty hash (no job).
 * Fields are escaped as they are when the reply is valid UTF-8 (RESP's framing is ASCII, so it is
 * exactly when every field is), else each is decoded as JSON.stringify would take it. Written a
 * byte at a time into the line's buffer: a call per piece was most of a purge's main thread.
 */
function writeLine(
  lines: LineWriter,
  buffer: Buffer,
  start: number,
  end: number,
  head: Buffer,
  id: string,
  score: string | undefined,
): boolean {
  let at = start + 1;
  let fields = 0;
  for (let byte = buffer[at]!; byte !== CR; byte = buffer[++at]!) fields = fields * 10 + byte - 48;
  if (fields <= 0 || buffer[start + 1] === MINUS) return false;
  at += 2;
  const valid = isUtf8(buffer.subarray(start, end));
  // Escaped, a byte takes at most six; decoded and re-encoded, at most three per UTF-16 unit; the
  // id and score at most six a unit (JSON.stringify's \uXXXX).
  lines.beginLine(
    head.length + (id.length + (score?.length ?? 4)) * 6 + (end - start) * 6 + LINE_END.length + 32,
  );
  const out = lines.lineBuffer;
  let o = lines.linePosition;
  for (let i = 0; i < head.length; i++) out[o++] = head[i]!;
  o = writeJsonText(id, out, o);
  for (let i = 0; i < SCORE.length; i++) out[o++] = SCORE[i]!;
  if (score === undefined) for (let i = 0; i < NULL.length; i++) out[o++] = NULL[i]!;
  else o = writeJsonText(score, out, o);
  for (let i = 0; i < FIELDS.length; i++) out[o++] = FIELDS[i]!;
  for (let f = 0; f < fields; f++) {
    let size = 0;
    for (let byte = buffer[++at]!; byte !== CR; byte = buffer[++at]!) size = size * 10 + byte - 48;
    const from = at + 2;
    const to = from + size;
    if (f > 0) out[o++] = COMMA;
    if (valid) {
      out[o++] = QUOTE;
      o = escapeJsonBytes(buffer, from, to, out, o);
      out[o++] = QUOTE;
    } else o += out.write(JSON.stringify(buffer.toString('utf8', from, to)), o);
    at = to + 2;
  }
  for (let i = 0; i < LINE_END.length; i++) out[o++] = LINE_END[i]!;
  lines.endLine(o);
  return true;
}

/** `text` as a JSON string at `at` in `out`: as it is for printable ASCII (ids, scores), else JSON.stringify's. */
function writeJsonText(text: string, out: Buffer, at: number): number {
  let o = at;
  out[o++] = QUOTE;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e || unit === QUOTE || unit === BACKSLASH)
      return at + out.write(JSON.stringify(text), at);
    out[o++] = unit;
  }
  out[o++] = QUOTE;
  return o;
}
