import type { Redis } from 'ioredis';
import { execWithScripts, luaScript, type PipelineStep } from '../lua.js';
import { ensureConnected } from '../redis-client.js';
import { RESULT_KEY_PREFIX, RETRIED_AS_FIELD } from './keys.js';
import { addSuccess, createSuccessTally, type SuccessCounts } from './success-tally.js';

/** One FAILURE stored by Celery's Redis result backend, reduced to what may be shown. */
export interface FailureRecord {
  id: string;
  /** Task name; empty when the app does not set `result_extended`. */
  name: string;
  /** `ExcType: first line of the message`. */
  error: string;
  /** Times the task ran: Celery's `retries` + 1. */
  attempts: number;
  /** `date_done`, epoch ms, or null when unparseable. */
  failedAt: number | null;
  /** `delivery_info.routing_key`; null without `result_extended`. */
  queue: string | null;
  /** When Redis will expire the key (epoch ms), when known. */
  expiresAt: number | null;
}

/** What a result backend says finished after a time, per queue (null: results that name none). */
export interface FinishedResults {
  byQueue: Map<string | null, { completed: number; failed: number }>;
  /** The backend held, or was sent, any result at all: without one, no rate can be known. */
  anyResults: boolean;
}

/** How far back the index counts successes: the rates look back 5 minutes, the margin is slow scans. */
export const RECENT_SUCCESSES_MS = 15 * 60_000;

/**
 * An in-memory index of the failures in a Celery result backend, so that status never scans the
 * keyspace: one incremental SCAN when first needed, kept fresh by the PUBLISH Celery sends on
 * every stored result, and a periodic rescan that catches anything missed (a dropped
 * subscription, expired keys, a result deleted by hand). The same scan and messages also count
 * the successes of the last {@link RECENT_SUCCESSES_MS} per queue and second (counts, not
 * records), so the rates every monitor sample and `status` show cost no read of their own.
 */
export interface FailureIndex {
  /** Resolves once the first scan finished; rejects (and can be retried) when it failed. */
  ready(): Promise<void>;
  /** Failures per queue; those without a queue field are under `null`. */
  counts(): Map<string | null, number>;
  /**
   * Failures per queue stored after `sinceMs` (their `date_done`), from memory: what the monitor
   * counts as new. Failures evicted by `maxRecords` are old ones and do not matter here.
   */
  countSince(sinceMs: number): Map<string | null, number>;
  /**
   * Successes and failures per queue stored after `sinceMs` (their `date_done`), from memory;
   * undefined when the index does not reach back that far (before its first scan's last
   * {@link RECENT_SUCCESSES_MS}), or is not ready.
   */
  finishedSince(sinceMs: number): FinishedResults | undefined;
  /** A queue's failures, newest first, at most `limit`. */
  newest(queue: string | null, limit: number): FailureRecord[];
  /** Runs a full rescan now; the index keeps serving the old data until it is done. */
  rescan(): Promise<void>;
  /**
   * Drops these ids at once: results deleted by queue-ops itself (a purge), or failures it retried
   * (their stored value is marked as such), so counts follow at once.
   */
  forget(ids: readonly string[]): void;
  close(): Promise<void>;
}

export interface FailureIndexDeps {
  /** The result backend, for SCAN and GET. */
  client: Redis;
  /** A connection of its own for PSUBSCRIBE (a subscribed connection can do nothing else). */
  subscriber: Redis;
  now?: () => number;
  /** Default 5 minutes. */
  rescanIntervalMs?: number;
  /** Records kept in memory; beyond it the oldest are only counted. Default 100,000. */
  maxRecords?: number;
  /** Keys per SCAN call. Default 1000. */
  scanCount?: number;
  /** Default 2 s. */
  connectTimeoutMs?: number;
}

/**
 * For the keys given: `key, value, pttl` of each whose value looks like a FAILURE; `queue,
 * date_done` of each SUCCESS done in (ARGV[1], ARGV[2]) (naive ISO UTC, which sorts as text, as
 * Celery writes it; none when ARGV[1] is empty); and how many held a string at all. A success's
 * value (its result, often large) never leaves Redis.
 */
const FILTER_RESULTS = luaScript(`
local from, to = ARGV[1], ARGV[2]
local failures, recent, seen = {}, {}, 0
for _, key in ipairs(KEYS) do
  local value = redis.pcall('GET', key)
  if type(value) == 'string' then
    seen = seen + 1
    local status = string.match(value, '"status"%s*:%s*"([A-Z]+)"')
    if status == 'SUCCESS' then
      if from ~= '' then
        local done = string.sub(string.match(value, '"date_done"%s*:%s*"([^"]*)"') or '', 1, 26)
        if done > from and done < to then
          recent[#recent + 1] = string.match(value, '"queue"%s*:%s*"([^"]*)"') or ''
          recent[#recent + 1] = done
        end
      end
    elseif string.find(value, '"FAILURE"', 1, true) then
      failures[#failures + 1] = key
      failures[#failures + 1] = value
      failures[#failures + 1] = redis.call('PTTL', key)
    end
  end
end
return { failures, recent, seen }`);

/** 1 or 0 per key: whether it exists (a published success is ours only when its key is in our DB). */
const EXIST_EACH = luaScript(`
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('EXISTS', key) end
return out`);

/** Naive ISO UTC with microseconds, as Celery writes `date_done`. */
export function naiveIso(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000`;
}

const SUCCESS_STATUS = /"status"\s*:\s*"SUCCESS"/;
const DATE_DONE = /"date_done"\s*:\s*"([^"]*)"/;
const QUEUE_FIELD = /"queue"\s*:\s*"([^"]*)"/;

const GET_BATCH = 250;

/** What one read of result keys found (`readResults`). */
interface ResultsRead {
  failures: { key: string; record: FailureRecord }[];
  successes: { queue: string | null; at: number }[];
  seen: number;
}

/**
 * Of the given result keys: each that holds a FAILURE, as a record; with a `recent` window, the
 * successes done in it (queue and epoch ms); and how many were results at all. Read on the
 * server so that successes (the vast majority, and often large) never cross the network.
 */
async function readResults(
  client: Redis,
  now: () => number,
  keys: string[],
  recent?: { from: number; to: number },
): Promise<ResultsRead> {
  const window = recent ? [naiveIso(recent.from), naiveIso(recent.to)] : ['', ''];
  const steps: PipelineStep[] = [];
  for (let i = 0; i < keys.length; i += GET_BATCH)
    steps.push({ script: FILTER_RESULTS, keys: keys.slice(i, i + GET_BATCH), args: window });
  const results = await execWithScripts(client, steps);
  const at = now();
  const failures: { key: string; record: FailureRecord }[] = [];
  const successes: { queue: string | null; at: number }[] = [];
  let seen = 0;
  for (const [error, value] of results) {
    if (error) throw error;
    const [flat, done, count] = value as [(string | number)[], string[], number];
    seen += Number(count);
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const key = String(flat[i]);
      const pttl = Number(flat[i + 2]);
      const record = parseFailure(
        key.slice(RESULT_KEY_PREFIX.length),
        String(flat[i + 1]),
        pttl > 0 ? at + pttl : null,
      );
      if (record) failures.push({ key, record });
    }
    for (let i = 0; i + 1 < done.length; i += 2) {
      const doneAt = parseDateDone(done[i + 1]);
      if (doneAt !== null) successes.push({ queue: done[i] || null, at: doneAt });
    }
  }
  return { failures, successes, seen };
}

/** Keeps `map` to `maxRecords` failures, the oldest dropped and counted per queue in `overflow`. */
function trim(map: Map<string, FailureRecord>, overflow: Map<string | null, number>, maxRecords: number) {
  // Amortised: sort only when well past the bound.
  if (map.size <= maxRecords * 1.1) return;
  const sorted = [...map.values()].sort((a, b) => (a.failedAt ?? 0) - (b.failedAt ?? 0));
  for (const record of sorted.slice(0, map.size - maxRecords)) {
    map.delete(record.id);
    overflow.set(record.queue, (overflow.get(record.queue) ?? 0) + 1);
  }
}

/** How a full scan reads the keyspace. */
interface ScanOptions {
  client: Redis;
  now: () => number;
  pattern: string;
  scanCount: number;
  maxRecords: number;
  connectTimeoutMs: number;
  isClosed: () => boolean;
}

/** One SCAN of every result key: the failures, the successes before `cut`, the results seen. */
async function scanAll(
  o: ScanOptions,
  cut: number,
): Promise<{
  fresh: Map<string, FailureRecord>;
  overflow: Map<string | null, number>;
  recent: SuccessCounts;
  seen: number;
}> {
  await ensureConnected(o.client, o.connectTimeoutMs);
  const fresh = new Map<string, FailureRecord>();
  const overflow = new Map<string | null, number>();
  const recent: SuccessCounts = new Map();
  let seen = 0;
  const window = { from: cut - RECENT_SUCCESSES_MS, to: cut };
  let cursor = '0';
  do {
    const [next, keys] = await o.client.scan(cursor, 'MATCH', o.pattern, 'COUNT', o.scanCount);
    cursor = next;
    if (keys.length === 0) continue;
    const read = await readResults(o.client, o.now, keys, window);
    for (const { record } of read.failures) fresh.set(record.id, record);
    for (const success of read.successes) addSuccess(recent, success.queue, Math.floor(success.at / 1000));
    seen += read.seen;
    trim(fresh, overflow, o.maxRecords);
  } while (cursor !== '0' && !o.isClosed());
  return { fresh, overflow, recent, seen };
}

/** 1 or 0 per result key of these ids: whether it is in our DB. */
async function existing(client: Redis, ids: string[]): Promise<number[]> {
  const [reply] = await execWithScripts(client, [
    { script: EXIST_EACH, keys: ids.map((id) => RESULT_KEY_PREFIX + id), args: [] },
  ]);
  if (reply![0]) throw reply![0];
  return reply![1] as number[];
}

/**
 * Takes `pending` in batches of GET_BATCH through `read` until none is left or the index closed,
 * one run at a time; a failed read forgets the rest (the result backend is unreachable; the
 * rescan after it comes back catches up).
 */
function batchReader<T>(
  pending: Map<string, T>,
  read: (batch: [string, T][]) => Promise<void>,
  isClosed: () => boolean,
) {
  let running = false;
  return async () => {
    if (running) return;
    running = true;
    try {
      while (pending.size > 0 && !isClosed()) {
        const batch = [...pending].slice(0, GET_BATCH);
        for (const [id] of batch) pending.delete(id);
        await read(batch);
      }
    } catch {
      pending.clear();
    } finally {
      running = false;
    }
  };
}

/**
 * Subscribes to every result's channel; after a reconnect `onReconnect` resubscribes (and
 * rescans). Resubscribed by us, not by ioredis: its own resubscribe leaves the command's promise
 * unhandled, so a connection that drops again at that moment (this client has no offline queue)
 * rejects it with nobody listening, and an unhandled rejection ends the process.
 */
async function subscribeResults(
  subscriber: Redis,
  pattern: string,
  connectTimeoutMs: number,
  onMessage: (pattern: string, channel: string, message: string) => void,
  onReconnect: () => void,
): Promise<void> {
  subscriber.options.autoResubscribe = false;
  await ensureConnected(subscriber, connectTimeoutMs);
  await subscriber.psubscribe(pattern);
  subscriber.on('pmessage', onMessage);
  subscriber.on('ready', onReconnect);
}

/** Per queue: how many of `records` pass `test`, on top of `start`. */
function countPerQueue(
  records: Iterable<FailureRecord>,
  test: (record: FailureRecord) => boolean,
  start: Iterable<[string | null, number]> = [],
): Map<string | null, number> {
  const counts = new Map<string | null, number>(start);
  for (const record of records)
    if (test(record)) counts.set(record.queue, (counts.get(record.queue) ?? 0) + 1);
  return counts;
}

/**
 * The failures the index holds, by id: set and cleared by the subscription, replaced whole by a
 * rescan (with what the subscription said while it ran on top), at most `maxRecords` of them
 * (the rest counted per queue).
 */
function createFailureRecords(maxRecords: number) {
  let records = new Map<string, FailureRecord>();
  /** Failures dropped from memory by `maxRecords`, still counted. */
  let evicted = new Map<string | null, number>();
  /** While a rescan runs, what the subscription said, applied on top of the scan's result. */
  let duringScan: Map<string, FailureRecord | null> | undefined;
  return {
    /** Sets (or, with null, forgets) one failure, in the index and in a rescan that is under way. */
    apply(id: string, record: FailureRecord | null) {
      if (record) records.set(id, record);
      else records.delete(id);
      duringScan?.set(id, record);
    },
    trim: () => trim(records, evicted, maxRecords),
    scanStarted() {
      duringScan = new Map();
    },
    /** A rescan's failures replace ours. */
    scanFinished(fresh: Map<string, FailureRecord>, overflow: Map<string | null, number>) {
      for (const [id, record] of duringScan ?? []) {
        if (record) fresh.set(id, record);
        else fresh.delete(id);
      }
      records = fresh;
      evicted = overflow;
      trim(records, evicted, maxRecords);
    },
    scanEnded() {
      duringScan = undefined;
    },
    dropExpired(at: number) {
      for (const [id, record] of records)
        if (record.expiresAt !== null && record.expiresAt <= at) records.delete(id);
    },
    counts: () => countPerQueue(records.values(), () => true, evicted),
    /** Per queue, the failures stored after `sinceMs` (their `date_done`). */
    countSince: (sinceMs: number) =>
      countPerQueue(records.values(), (r) => r.failedAt !== null && r.failedAt > sinceMs),
    newest(queue: string | null, limit: number) {
      const matching: FailureRecord[] = [];
      for (const record of records.values()) if (record.queue === queue) matching.push(record);
      matching.sort((a, b) => (b.failedAt ?? 0) - (a.failedAt ?? 0) || (a.id < b.id ? -1 : 1));
      return matching.slice(0, Math.max(0, limit));
    },
    get size() {
      return records.size;
    },
    clear() {
      records.clear();
    },
  };
}

/**
 * What Celery publishes on every stored result, read into the index: a success counted, a failure
 * recorded, anything else a failure cleared (a retry that later succeeded). Each is first found in
 * our DB (see `toConfirm`), in batches.
 */
function readPublished(
  client: Redis,
  now: () => number,
  records: ReturnType<typeof createFailureRecords>,
  tally: ReturnType<typeof createSuccessTally>,
  isClosed: () => boolean,
) {
  /**
   * Published failures whose stored value is still to be read. Pub/sub channels are global to a
   * Redis server while keys live in one DB: another Celery app on another DB of the same server
   * publishes on the very same channel names. So a published FAILURE only counts once the key is
   * found in our DB, read back in batches (a burst of failures is a few script calls, not one GET
   * each), which also gives it the key's expiry.
   */
  const toConfirm = new Map<string, true>();
  const confirm = batchReader(
    toConfirm,
    async (batch) => {
      const ids = batch.map(([id]) => id);
      const found = new Map(
        (
          await readResults(
            client,
            now,
            ids.map((id) => RESULT_KEY_PREFIX + id),
          )
        ).failures.map((r) => [r.key, r]),
      );
      for (const id of ids) records.apply(id, found.get(RESULT_KEY_PREFIX + id)?.record ?? null);
      records.trim();
    },
    isClosed,
  );

  /**
   * Published successes whose key is still to be found in our DB (queue and time done): as
   * `confirm`, one EXISTS each, in batches. Cheap, and proportional to the tasks run, never to
   * the queues or the keyspace.
   */
  const successesToConfirm = new Map<string, { queue: string | null; at: number }>();
  const confirmSuccesses = batchReader(
    successesToConfirm,
    async (batch) => {
      const exists = await existing(
        client,
        batch.map(([id]) => id),
      );
      batch.forEach(([, { queue, at }], i) => {
        if (exists[i] === 1) tally.published(queue, at);
      });
    },
    isClosed,
  );

  const onMessage = (_pattern: string, channel: string, message: string) => {
    if (!channel.startsWith(RESULT_KEY_PREFIX)) return;
    const id = channel.slice(RESULT_KEY_PREFIX.length);
    if (SUCCESS_STATUS.test(message)) {
      const at = parseDateDone(DATE_DONE.exec(message)?.[1]);
      if (at !== null) {
        successesToConfirm.set(id, { queue: QUEUE_FIELD.exec(message)?.[1] || null, at });
        void confirmSuccesses();
      }
    }
    // Celery publishes every stored state; anything but FAILURE (a retry that later succeeded)
    // clears it. Ids are uuids, so clearing one another app published is harmless.
    if (!message.includes('FAILURE')) {
      toConfirm.delete(id);
      records.apply(id, null);
      return;
    }
    toConfirm.set(id, true);
    void confirm();
  };

  return {
    onMessage,
    /** Forgets a failure published and not yet read. */
    forget: (id: string) => toConfirm.delete(id),
    clear: () => toConfirm.clear(),
  };
}

export function createFailureIndex(deps: FailureIndexDeps): FailureIndex {
  const { client, subscriber } = deps;
  const now = deps.now ?? Date.now;
  const rescanIntervalMs = deps.rescanIntervalMs ?? 5 * 60_000;
  const maxRecords = deps.maxRecords ?? 100_000;
  const connectTimeoutMs = deps.connectTimeoutMs ?? 2000;
  const pattern = `${RESULT_KEY_PREFIX}*`;
  const scan: ScanOptions = {
    client,
    now,
    pattern,
    scanCount: deps.scanCount ?? 1000,
    maxRecords,
    connectTimeoutMs,
    isClosed: () => closed,
  };

  const records = createFailureRecords(maxRecords);
  const tally = createSuccessTally(RECENT_SUCCESSES_MS);
  let readyPromise: Promise<void> | undefined;
  let scanning: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let subscribed = false;
  let closed = false;

  const published = readPublished(client, now, records, tally, () => closed);
  const onMessage = published.onMessage;

  async function subscribe() {
    if (subscribed) return;
    await subscribeResults(subscriber, pattern, connectTimeoutMs, onMessage, () => {
      // What was published while the connection was down is lost, and a restarted Redis may have
      // lost what we still hold: rescan. A resubscribe that fails is tried at the next reconnect.
      if (closed) return;
      subscriber.psubscribe(pattern).catch(() => undefined);
      void rescan().catch(() => undefined);
    });
    subscribed = true;
  }

  function rescan(): Promise<void> {
    if (scanning) return scanning;
    records.scanStarted();
    scanning = (async () => {
      try {
        // The scan counts the successes done before it starts, the subscription the rest.
        const cut = now();
        tally.scanStarted(cut);
        const { fresh, overflow, recent, seen } = await scanAll(scan, cut);
        records.scanFinished(fresh, overflow);
        tally.scanFinished(cut, recent, seen);
      } finally {
        records.scanEnded();
        scanning = undefined;
        tally.scanEnded();
      }
    })();
    return scanning;
  }

  function dropExpired() {
    const at = now();
    records.dropExpired(at);
    tally.dropBefore(Math.floor((at - RECENT_SUCCESSES_MS) / 1000));
  }

  function ready(): Promise<void> {
    if (closed) return Promise.reject(new Error('failure index is closed'));
    if (!readyPromise) {
      readyPromise = (async () => {
        // Subscribe first: a failure stored while the scan runs is then seen by one or the other.
        await subscribe();
        await rescan();
        if (!timer && !closed) {
          timer = setInterval(() => void rescan().catch(() => undefined), rescanIntervalMs);
          timer.unref();
        }
      })();
      readyPromise.catch(() => {
        readyPromise = undefined;
      });
    }
    return readyPromise;
  }

  return {
    ready,
    rescan,
    counts() {
      dropExpired();
      return records.counts();
    },
    countSince(sinceMs) {
      dropExpired();
      return records.countSince(sinceMs);
    },
    finishedSince(sinceMs) {
      if (!tally.covers(sinceMs, now)) return undefined;
      dropExpired();
      const byQueue = new Map<string | null, { completed: number; failed: number }>();
      const entry = (queue: string | null) => {
        let e = byQueue.get(queue);
        if (!e) {
          e = { completed: 0, failed: 0 };
          byQueue.set(queue, e);
        }
        return e;
      };
      tally.completedSince(sinceMs, (queue, n) => {
        entry(queue).completed += n;
      });
      for (const [queue, n] of records.countSince(sinceMs)) entry(queue).failed += n;
      return { byQueue, anyResults: tally.anySeen() || records.size > 0 };
    },
    newest(queue, limit) {
      dropExpired();
      return records.newest(queue, limit);
    },
    forget(ids) {
      for (const id of ids) {
        published.forget(id);
        records.apply(id, null);
      }
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      subscriber.off('pmessage', onMessage);
      records.clear();
      published.clear();
    },
  };
}

/**
 * A stored result as a FailureRecord, or undefined when it is not a JSON FAILURE. Never keeps
 * args, kwargs or the traceback.
 */
export function parseFailure(id: string, raw: string, expiresAt: number | null): FailureRecord | undefined {
  if (!raw.includes('FAILURE')) return undefined;
  let meta: Record<string, unknown>;
  try {
    meta = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!meta || typeof meta !== 'object' || meta.status !== 'FAILURE') return undefined;
  // Retried by queue-ops: the task runs again under a new id, so this is no dead letter any more.
  if (meta[RETRIED_AS_FIELD] !== undefined) return undefined;
  const retries = Number(meta.retries);
  return {
    id: typeof meta.task_id === 'string' && meta.task_id ? meta.task_id : id,
    name: typeof meta.name === 'string' ? meta.name : '',
    error: formatCeleryError(meta.result),
    attempts: (Number.isFinite(retries) && retries >= 0 ? retries : 0) + 1,
    failedAt: parseDateDone(meta.date_done),
    queue: typeof meta.queue === 'string' && meta.queue ? meta.queue : null,
    expiresAt,
  };
}

/** `{"exc_type":"ValueError","exc_message":["boom\nmore"]}` → `ValueError: boom`. */
export function formatCeleryError(result: unknown): string {
  if (!result || typeof result !== 'object') return firstLine(String(result ?? 'unknown error'));
  const { exc_type: type, exc_message: message } = result as { exc_type?: unknown; exc_message?: unknown };
  let text: string;
  if (Array.isArray(message)) {
    text = message.length === 1 ? stringify(message[0]) : message.map(stringify).join(', ');
  } else {
    text = message === undefined || message === null ? '' : stringify(message);
  }
  const head = typeof type === 'string' && type ? type : 'Exception';
  const line = firstLine(text);
  return line ? `${head}: ${line}` : head;
}

function stringify(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** Celery 5.2 writes `date_done` as a naive UTC ISO string with microseconds. */
export function parseDateDone(value: unknown): number | null {
  if (typeof value !== 'string' || !value) return null;
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(value.trim());
  if (!match) return null;
  const fraction = match[2] ? match[2].slice(0, 4).padEnd(4, '0') : '';
  const parsed = Date.parse(`${match[1]}${fraction}${match[3] ?? 'Z'}`);
  return Number.isFinite(parsed) ? parsed : null;
}
