import type { SystemType, UnknownRate } from '../backends/queue-backend.js';

/**
 * What one monitor tick saw, kept (a short history) in the bot's store so that windows (`for`,
 * `within`), rates and the sparkline survive restarts and work for `monitor --once` from cron.
 * Only numbers and names: never job data.
 */
export interface Sample {
  /** Epoch milliseconds. */
  at: number;
  systems: SystemSample[];
}

export interface SystemSample {
  name: string;
  type: SystemType;
  /** False when the system's Redis could not be read this tick. */
  ok: boolean;
  /** One line, when not ok. */
  error?: string;
  memory?: { used: number; max: number; policy: string };
  /**
   * One identity per connected worker (name, plus the connection address when known, so a worker
   * that restarts under the same name still counts as one leaving and one arriving). Null when
   * the workers could not be asked (Celery inspection timed out, CLIENT LIST refused).
   */
  workers: string[] | null;
  /**
   * The last background save's and AOF write's status (`ok`, `err`; AOF null when off), read with
   * one INFO persistence a tick. Absent when it could not be read, and in older samples.
   */
  persistence?: { rdb: string; aof: string | null };
  /**
   * Present when this tick read the queues' rates (every tick since every sample has them; absent
   * in older samples): a queue without `throughput` or `failedPerMinute` then had that rate not
   * known, for `unknown` (Celery: no result at all, results naming no queue) or else, BullMQ, as
   * its queue keeps no finished job of that outcome. Kept per system so a sample of 1,000 queues
   * grows by a few bytes, not a reason per queue.
   */
  rates?: { unknown?: UnknownRate; estimated?: true };
  /**
   * The connection to this system's Redis as the tick saw it (`network.ts`, the `redis-network`
   * rule and `why`'s evidence). Absent when it could not be read, and in older samples.
   */
  network?: NetworkSample;
  queues: QueueSample[];
}

/**
 * One tick's reading of the network to a system's Redis. Counters are as Redis reports them;
 * deltas, `young`, `reconnects` and `returned` are against the previous good sample of the system.
 */
export interface NetworkSample {
  /** PING round trips of the bot's own connection this tick, ms: p50, p95, max of `pings` (1 to 5). */
  rttP50Ms: number;
  rttP95Ms: number;
  rttMaxMs: number;
  pings: number;
  /** `total_connections_received` and `rejected_connections` (INFO stats), as read. */
  received: number;
  rejected: number;
  /** Their increase since the previous sample (absent in the first, and after a Redis restart). */
  receivedDelta?: number;
  rejectedDelta?: number;
  /** `connected_clients` (INFO clients). */
  clients: number;
  /** Clients in CLIENT LIST not named `queue-ops…` (workers, apps); absent when CLIENT LIST is refused. */
  others?: number;
  /** Of those, connected since the previous sample (an id above its `lastClientId`). */
  young?: number;
  /** The highest client id in CLIENT LIST (Redis numbers connections in order). */
  lastClientId?: number;
  /** The age of the longest-lived of the other clients, seconds (connections that stay young keep it low). */
  oldestOtherSeconds?: number;
  /** Young connections that replace ones that left rather than add to them (young − growth). */
  reconnects?: number;
  /** Workers missing from the previous sample and back now under the same name (dropped out of `ping`). */
  returned?: number;
  /** Queues with consumers and waiting work where nothing was done for 5 minutes, nothing running. */
  silent?: number;
  /** The first 10 of those. */
  silentQueues?: string[];
  /** Which signals held this tick (`rtt`, `rejected`, `reconnects`, `returned`, `silent`); [] when stable. */
  signals: string[];
}

export interface QueueSample {
  name: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  /** Null when nothing waits or the age is not known. */
  oldestWaitingSeconds: number | null;
  /**
   * Jobs that failed since this system's previous good sample, counted by when they failed (so a
   * failed set capped by `removeOnFail` still shows them, up to the cap between two samples); absent in the first sample and in
   * samples stored before it existed, where `failedIncrease` falls back to the change of `failed`.
   */
  failedNew?: number;
  /**
   * Paused on purpose (BullMQ's pause, queue-ops' Celery pause mark): rules skip it unless they
   * say `includePaused: true`. Absent in samples stored before it existed (read as not paused).
   */
  paused?: boolean;
  /** Workers consuming this queue; null when unknown (see `SystemSample.workers`). */
  workers: number | null;
  /**
   * The message at the head of the queue and when the monitor first saw it there (Celery, whose
   * messages carry no enqueue time); carried from sample to sample while the head stays the same.
   */
  head?: { id: string; firstSeen: number };
  /**
   * Jobs completed per minute over the sampler's throughput span (the 5 minutes before the
   * sample), and failed per minute; absent when not known (`SystemSample.rates` says why), and in
   * samples stored before every sample had them (rules then see no value).
   */
  throughput?: number;
  failedPerMinute?: number;
  /** Set only when the rates came from BullMQ's own metrics rather than the kept jobs. */
  rateSource?: 'metrics';
  /** p95 of wait and run of the newest finished jobs, in seconds; absent when unknown (Celery). */
  waitP95Seconds?: number;
  runP95Seconds?: number;
}

/**
 * A queue field's values, one per queue in order: an array when every queue has the field, or
 * the positions that have it and their values when only some do (`failedNew`, `head`, …).
 */
type Column = unknown[] | { at: number[]; values: unknown[] };

/** A system as stored: its queues by field (`StoredSample`). */
type StoredSystem = Omit<SystemSample, 'queues'> & {
  queues: { count: number; fields: Record<string, Column> };
};

/**
 * A sample as stored from version 2 on: the queues' fields as columns, each name written once.
 * A sample of 1,000 queues as an array of objects was ~120 KB of JSON, most of it the same ten
 * field names a thousand times over, written every tick and read back by every `trend`; as
 * columns it is about a quarter of that, and quicker to write and to parse. Samples written
 * before (a plain `Sample`) are read as they are, and pruned within a day.
 */
interface StoredSample {
  v: 2;
  at: number;
  systems: StoredSystem[];
}

/** The stored text of a sample (`decodeSample` reads it back). Any field of a queue is kept. */
export function encodeSample(sample: Sample): string {
  const stored: StoredSample = {
    v: 2,
    at: sample.at,
    systems: sample.systems.map(({ queues, ...system }) => {
      // Each field's values by queue position, at their final size (a tick writes 1,000s of them;
      // arrays grown push by push were most of this function's time); gaps filled in below.
      const count = queues.length;
      const columns = new Map<string, { values: unknown[]; present: number }>();
      for (let i = 0; i < count; i++) {
        const queue = queues[i] as unknown as Record<string, unknown>;
        for (const field in queue) {
          const value = queue[field];
          if (value === undefined) continue;
          let column = columns.get(field);
          if (!column) {
            column = { values: new Array(count).fill(undefined), present: 0 };
            columns.set(field, column);
          }
          column.values[i] = value;
          column.present++;
        }
      }
      const fields: Record<string, Column> = {};
      for (const [field, { values, present }] of columns) {
        if (present === count) {
          fields[field] = values;
          continue;
        }
        const sparse = { at: [] as number[], values: [] as unknown[] };
        for (let i = 0; i < count; i++) {
          if (values[i] === undefined) continue;
          sparse.at.push(i);
          sparse.values.push(values[i]);
        }
        fields[field] = sparse;
      }
      return { ...system, queues: { count, fields } };
    }),
  };
  return JSON.stringify(stored);
}

/** A stored sample, written by `encodeSample` or (before it) as plain JSON. */
export function decodeSample(text: string): Sample {
  const parsed = JSON.parse(text) as Sample | StoredSample;
  if (!('v' in parsed) || parsed.v !== 2) return parsed as Sample;
  return {
    at: parsed.at,
    systems: parsed.systems.map(({ queues: { count, fields }, ...system }) => {
      const queues: Record<string, unknown>[] = [];
      for (let i = 0; i < count; i++) queues.push({});
      for (const field in fields) {
        const column = fields[field]!;
        if (Array.isArray(column)) {
          for (let i = 0; i < count; i++) queues[i]![field] = column[i];
        } else {
          for (let k = 0; k < column.at.length; k++) queues[column.at[k]!]![field] = column.values[k];
        }
      }
      return { ...system, queues: queues as unknown as QueueSample[] };
    }),
  };
}

/**
 * One system of a sample with its queues' fields left as columns: what a reader that needs a few
 * fields of a few queues takes instead of `decodeSample`, which builds every field of every queue
 * of every system (`why` reads 30 samples of 1,000 queues back and looks at a handful).
 */
export interface SystemColumns {
  at: number;
  system: Omit<SystemSample, 'queues'>;
  /** The queues' names, by position: a queue's position in every column. */
  names: readonly string[];
  /** One field of the queues, by position: its value, or undefined where a queue has none. */
  column<F extends keyof QueueSample>(field: F): (position: number) => QueueSample[F] | undefined;
}

const nothing = () => undefined;

/** A stored column as a lookup by queue position. */
function lookup(column: Column | undefined, count: number): (position: number) => unknown {
  if (column === undefined) return nothing;
  if (Array.isArray(column)) return (position) => column[position];
  // Sparse: spread once to its positions (a reader asks for a column, then for several queues).
  const values: unknown[] = new Array(count).fill(undefined);
  for (let k = 0; k < column.at.length; k++) values[column.at[k]!] = column.values[k];
  return (position) => values[position];
}

/** The columns of one system of a sample already built (the monitor's, a sample stored before version 2). */
export function columnsOf(at: number, { queues, ...system }: SystemSample): SystemColumns {
  return {
    at,
    system,
    names: queues.map((q) => q.name),
    column:
      <F extends keyof QueueSample>(field: F) =>
      (position: number) =>
        queues[position]?.[field],
  };
}

/**
 * One system of a stored sample, its queues as columns straight from the stored form (no queue
 * object is built); undefined when the sample has no such system. Reads every stored version.
 */
export function decodeSystemColumns(text: string, name: string): SystemColumns | undefined {
  const parsed = JSON.parse(text) as Sample | StoredSample;
  if (!('v' in parsed) || parsed.v !== 2) {
    const mine = (parsed as Sample).systems.find((s) => s.name === name);
    return mine ? columnsOf(parsed.at, mine) : undefined;
  }
  const mine = parsed.systems.find((s) => s.name === name);
  if (!mine) return undefined;
  const {
    queues: { count, fields },
    ...system
  } = mine;
  const names = lookup(fields.name, count);
  return {
    at: parsed.at,
    system,
    names: Array.isArray(fields.name)
      ? (fields.name as string[])
      : Array.from({ length: count }, (_, i) => names(i) as string),
    column: <F extends keyof QueueSample>(field: F) =>
      lookup(fields[field], count) as (position: number) => QueueSample[F] | undefined,
  };
}
