import type { Redis } from 'ioredis';
import { LineWriter } from '../../archive/archive.js';
import { runScript, runScriptBuffer } from '../lua.js';
import { previewOf } from '../purge-preview.js';
import type { PurgeBatch, PurgePlace, PurgeState, QueuePurger } from '../queue-backend.js';
import { openRawPipe, type RawPipe } from '../raw-pipe.js';
import { connectionServing } from '../redis-client.js';
import { READ_SELECTED } from './filter-script.js';
import { type HashSizes, readHashesThroughPipe } from './purge-read.js';
import { createBullmqRestorer } from './purge-restore.js';
import { PURGE_DELETE } from './scripts.js';

/**
 * Where each state's jobs sit, in the order a purge walks them: delayed first, so that a delayed
 * job promoted to `wait` while the purge runs is still met there; `paused` is BullMQ < 6's list
 * of waiting jobs of a paused queue.
 */
export const LAYOUT: { state: PurgeState; name: string; kind: 'list' | 'zset' }[] = [
  { state: 'delayed', name: 'delayed', kind: 'zset' },
  { state: 'failed', name: 'failed', kind: 'zset' },
  { state: 'waiting', name: 'prioritized', kind: 'zset' },
  { state: 'waiting', name: 'paused', kind: 'list' },
  { state: 'waiting', name: 'wait', kind: 'list' },
];

/** Jobs per READ_SELECTED call when the hashes are read by Lua (about 12 µs of Redis a job). */
const LUA_READ_CALL = 250;

/** How long a read through the pipe may wait for Redis: the purge connection's command timeout. */
const READ_TIMEOUT_MS = 30_000;

/**
 * A job's hash from its archive line: `fields` (HGETALL's field, value, … as Redis wrote it) in
 * archives written now, `hash` (an object) in archives written before.
 */
export function archivedHash(job: {
  fields?: string[];
  hash?: Record<string, string>;
}): Record<string, string> {
  if (job.hash) return job.hash;
  const hash: Record<string, string> = {};
  const fields = job.fields ?? [];
  for (let i = 0; i + 1 < fields.length; i += 2) hash[fields[i]!] = fields[i + 1]!;
  return hash;
}

/**
 * A read call stops once its hashes pass this many bytes: a batch of big jobs (large data,
 * stack traces) stays one short call, at least one job each.
 */
const READ_BYTES = 512 * 1024;

/**
 * The ids of a read's reply, cjson's JSON array of strings. Without a backslash (cjson escapes a
 * quote, a backslash, a control and `/` with one) the ids are exactly what lies between `","`:
 * split rather than parsed, since JSON.parse looks every short string up in V8's string table,
 * which at a million ids was a tenth of the purge's main thread.
 */
function idsOf(json: Buffer): string[] {
  const text = json.toString();
  if (text.length < 4 || text.includes('\\')) return JSON.parse(text) as string[];
  return text.slice(2, -2).split('","');
}

/**
 * A batch from READ_SELECTED's reply (see READ_HASHES): the line is put together here
 * around the hashes' bytes, which are never decoded: a string per job was most of the client's
 * time and garbage.
 */
export function batchOfReply(placeName: string, reply: Buffer[]): PurgeBatch {
  if (reply.length === 0) return { items: [], lines: [] };
  const ids = idsOf(reply[0]!);
  const scores = reply[1]!.length > 0 ? (JSON.parse(reply[1]!.toString()) as string[]) : undefined;
  const logs = reply[2]!.length > 0 ? (JSON.parse(reply[2]!.toString()) as string[][]) : undefined;
  const hashes = reply.slice(3);
  let bytes = reply[2]!.length;
  for (const block of hashes) bytes += block.length;
  // The hashes' and logs' bytes, plus each line's few words and its id around them.
  const lines = new LineWriter(bytes + ids.length * 96);
  const head = `{"p":${JSON.stringify(placeName)},"id":`;
  let i = 0;
  for (const block of hashes) {
    // cjson escapes a newline inside a string, so a raw one only ever separates two hashes.
    for (let from = 0; from < block.length; i += 1) {
      const end = block.indexOf(10, from);
      const to = end < 0 ? block.length : end;
      const score = scores ? JSON.stringify(scores[i]) : 'null';
      lines.writeAround(
        `${head}${JSON.stringify(ids[i])},"s":${score},"j":{"fields":`,
        block,
        from,
        to,
        `,"logs":${logs ? JSON.stringify(logs[i]) : '[]'}}}\n`,
      );
      from = to + 1;
    }
  }
  return { items: ids.map((identity) => ({ identity })), lines: lines.blocks() };
}

/** A preview's sample entry from one archive line: the job's name and age, never its data. */
export function sampleOfLine(line: string, now: number): { name: string; ageSeconds: number | null } {
  const hash = archivedHash((JSON.parse(line) as { j: Parameters<typeof archivedHash>[0] }).j);
  const timestamp = Number(hash.timestamp);
  return {
    name: hash.name ?? '',
    ageSeconds: Number.isFinite(timestamp) ? Math.max(0, Math.floor((now - timestamp) / 1000)) : null,
  };
}

/**
 * The purger of one BullMQ queue (5.x and 6.x share this layout). Archived lines are
 * `{"p":place,"id":…,"s":score|null,"j":{"fields":[f1,v1,…],"logs":[…]}}`: everything undo needs
 * to put the job back with the same id, data, options, timestamps and place. `fields` is the
 * hash's HGETALL as Redis' cjson wrote it, copied into the line byte for byte (archives before
 * it held `"hash":{…}`, which undo still reads).
 */
export function createBullmqPurger(options: {
  client: Redis;
  prefix: string;
  queue: string;
  now?: () => number;
  /**
   * Opens the raw pipe the hashes are read through (see `read`); by default, one beside `client`.
   * Resolving to undefined reads them by Lua alone.
   */
  openPipe?: () => Promise<RawPipe | undefined>;
}): QueuePurger {
  const { client, prefix, queue } = options;
  const now = options.now ?? Date.now;
  const base = `${prefix}:${queue}:`;
  const sizes = (states: PurgeState[]) => placeSizes(client, base, states);

  const hashSizes: HashSizes = { bytesPerJob: undefined };
  let pipe: Promise<RawPipe | undefined> | undefined;

  /**
   * One batch: its ids (and scores) read on the purge's connection, in order with its deletes (an
   * offset counts on every delete sent before it having run), then their hashes through the raw
   * pipe (readHashesThroughPipe). Without a pipe, with logs to read, or when the pipe fails, the
   * hashes are read by READ_SELECTED through the client instead, whose reply gives the same lines
   * (batchOfReply): a Redis that is really gone then fails the read the way every other call does.
   */
  async function read(place: PurgePlace, offset: number, limit: number): Promise<PurgeBatch> {
    // Sent before anything is awaited: `read` is called in order with `remove`.
    const range =
      place.kind === 'list'
        ? client.lrange(base + place.name, -(offset + limit), -(offset + 1))
        : client.zrange(base + place.name, offset, offset + limit - 1, 'WITHSCORES');
    const got = await range;
    let ids: string[];
    let scores: string[] | undefined;
    if (place.kind === 'list') ids = got.reverse();
    else {
      ids = [];
      scores = [];
      for (let i = 0; i < got.length; i += 2) {
        ids.push(got[i]!);
        scores.push(got[i + 1]!);
      }
    }
    if (ids.length === 0) return { items: [], lines: [] };
    pipe ??= options.openPipe ? options.openPipe() : openPipeBeside(client, base + place.name);
    const open = await pipe;
    if (open && !open.closed) {
      try {
        const batch = await readHashesThroughPipe(open, {
          base,
          placeName: place.name,
          ids,
          scores,
          budget: READ_BYTES,
          sizes: hashSizes,
        });
        if (batch) return batch;
      } catch {
        // A connection lost or a reply it cannot take: the client reads from now on.
        open.close();
      }
    }
    return await readThroughLua(client, base, place, ids);
  }

  return {
    async preview(states) {
      // The sample is what goes first: the places are walked in the order a purge takes them.
      return await previewOf(await sizes(states), read, (line) => sampleOfLine(line, now()));
    },

    places: sizes,
    read,

    async remove(place, items) {
      if (items.length === 0) return [];
      const flags = (await runScript(
        client,
        PURGE_DELETE,
        [base + place.name],
        [place.kind, base, ...items.map((i) => i.identity)],
      )) as number[];
      return flags.map((f) => Number(f) > 0);
    },

    parse(line) {
      const { p, id } = JSON.parse(line) as { p: string; id: string };
      return { place: p, identity: id };
    },

    ...createBullmqRestorer({ client, prefix, queue }),

    meta: () => ({ prefix, keyBase: base }),

    // A read is one LRANGE or ZRANGE of its ids (well under a millisecond at a thousand) and their
    // hashes through the pipe, which Redis takes as separate commands, between any other client's;
    // its Lua fallback goes a few hundred jobs a call. A delete costs Redis about 2 µs a job (two
    // keys unlinked), so one of 500 holds it about a millisecond. A thousand a read halved the
    // calls and awaits a job against 250, for 20 % more jobs a second.
    batch: { read: 1000, delete: 500 },

    async close() {
      (await pipe)?.close();
      client.disconnect();
    },
  };
}

/** How many jobs each place holds, in one pipeline, in the order a purge walks them. */
async function placeSizes(client: Redis, base: string, states: PurgeState[]): Promise<PurgePlace[]> {
  const wanted = LAYOUT.filter((p) => states.includes(p.state));
  const pipeline = client.pipeline();
  for (const place of wanted) {
    if (place.kind === 'list') pipeline.llen(base + place.name);
    else pipeline.zcard(base + place.name);
  }
  const replies = (await pipeline.exec()) ?? [];
  return wanted.map((place, i) => {
    const [error, size] = replies[i]!;
    if (error) throw error;
    return { ...place, size: Number(size) };
  });
}

/** A raw pipe beside the connection that serves the queue's keys (one node of a cluster). */
async function openPipeBeside(client: Redis, key: string): Promise<RawPipe | undefined> {
  const serving = connectionServing(client, key);
  if (!serving) return undefined;
  // A cluster's node clients carry the cluster's connection name (its redisOptions).
  return await openRawPipe(serving, {
    name: `${serving.options.connectionName ?? 'queue-ops:purge'}:read`,
    timeoutMs: READ_TIMEOUT_MS,
  });
}

/**
 * The hashes of `ids` by READ_SELECTED, a few hundred a call (a script holds Redis while it
 * runs), stopping after the call that passes READ_BYTES.
 */
async function readThroughLua(
  client: Redis,
  base: string,
  place: PurgePlace,
  ids: string[],
): Promise<PurgeBatch> {
  const items: PurgeBatch['items'] = [];
  const lines: Buffer[] = [];
  let bytes = 0;
  for (let i = 0; i < ids.length && bytes < READ_BYTES; i += LUA_READ_CALL) {
    const reply = (await runScriptBuffer(
      client,
      READ_SELECTED,
      [base + place.name],
      [place.kind, base, ...ids.slice(i, i + LUA_READ_CALL)],
    )) as Buffer[];
    const batch = batchOfReply(place.name, reply);
    items.push(...batch.items);
    for (const block of batch.lines) {
      lines.push(block);
      bytes += block.length;
    }
  }
  return { items, lines };
}
