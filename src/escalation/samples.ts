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
  queues: QueueSample[];
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
