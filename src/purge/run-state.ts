import { CHUNK_RECORDS } from '../archive/archive.js';
import type {
  PurgeState as BackendState,
  PurgeItem,
  PurgePlace,
  QueuePurger,
} from '../backends/queue-backend.js';
import type { PurgeRecord, PurgeStore } from '../store/store.js';
import type { PurgeRecovery, RecoveredRun } from './recovery.js';

/** How far a purge or an undo has come (the approvals' `ActionProgress`). */
export interface Progress {
  done: number;
  total: number;
  phase?: string;
}

export interface EngineDeps {
  store: PurgeStore;
  purger: QueuePurger;
  /** `host:pid` of this process; every write of the purge's row is conditional on it. */
  owner: string;
  now?: () => Date;
  progress?: (update: Progress) => void;
  signal?: AbortSignal;
  /** Entries per read call (one short script). Default 500. */
  readBatch?: number;
  /** Entries per delete call (one short script). Default 1000. */
  deleteBatch?: number;
  /** Entries per archive file: each is fsynced and recorded once. Default 10,000. */
  chunkSize?: number;
  /**
   * Told after each delete call how many of chunk `seq`'s jobs the delete scripts have reported
   * removed so far: what is gone from Redis before the chunk's row says so.
   */
  deleted?: (seq: number, purged: number) => void;
  /**
   * The most each state gives up, over every run of the purge (its preview's count per state,
   * stored with the request): what the approver saw is the most that goes, oldest first. Jobs
   * that arrived since stay. A state without a cap is bounded by `total` alone.
   */
  caps?: Partial<Record<BackendState, number>>;
}

/**
 * One run of one purge: what its three phases (read, archive, delete; see `runPurge`) share. The
 * read phase (read.ts) takes records and hands them on in chunks; the chunk phases (chunk.ts)
 * archive, record and delete each chunk in order, on chains that overlap with the next reads.
 */
export interface PurgeRun {
  readonly purge: PurgeRecord;
  readonly deps: EngineDeps;
  readonly now: () => Date;
  /** Entries per read call, per delete call, and per archive file. */
  readonly readBatch: number;
  readonly deleteBatch: number;
  readonly chunkSize: number;

  /** Every identity an earlier run archived, and its chunk (see recovery.ts). */
  readonly earlier: ReadonlyMap<string, number>;
  /** Each earlier chunk's outcome, amended when the walk meets its jobs again. */
  readonly outcomes: RecoveredRun['outcomes'];
  /** What Redis said of the jobs an earlier run archived (returned with the outcome). */
  readonly recovered: PurgeRecovery;

  /** Records archived, this run and the ones before. */
  archived: number;
  /** The last chunk number used. */
  seq: number;
  /** Records resolved (deleted, gone or left): the progress reported. */
  resolved: number;
  /**
   * Records taken, counted against the purge's `total`: jobs counted when the purge started are
   * what it takes, so producers adding more meanwhile do not keep it running forever.
   */
  readTotal: number;
  /** How many of each state the purge has taken, this run and the ones before: a cap is the most. */
  readonly takenByState: Map<BackendState, number>;

  /** Identities of the records on their way (read, not yet deleted): a read met twice is taken once. */
  readonly seen: Set<string>;
  /** Read records an earlier run already archived (see `earlier`): deleted, not archived again. */
  readonly metAgain: Set<PurgeItem>;
  /**
   * Reads are numbered as sent and settled (processed or dropped) in that order. A chunk's
   * identities are forgotten only once every read sent before its delete has settled: such a read
   * may hold some of them (the tail moved between two reads), and if its reply were processed
   * after they were forgotten they would be archived a second time. A read sent after the delete
   * runs after it in Redis and cannot see them.
   */
  readsSent: number;
  readsSettled: number;
  readonly forgetting: { identities: string[]; afterRead: number }[];

  /** The first failure of a chunk's archive, record or delete: the walk ends on it. */
  failure: unknown;
  /** Chunk files written one at a time, in order. */
  writeChain: Promise<void>;
  /** Chunk rows (and the purge's heartbeat) recorded in order, each once its file is written. */
  recordChain: Promise<void>;
  /** Chunks deleted in order, each once recorded; never rejects (a failure goes to `failure`). */
  deleteChain: Promise<void>;
  /** Chunks on their way out: at most a few, so memory stays bounded whatever the queue's size. */
  readonly inFlight: Promise<void>[];
}

/** A run that starts where the earlier runs of the purge left it (see recovery.ts). */
export function startRun(
  purge: PurgeRecord,
  deps: EngineDeps,
  earlierRun: RecoveredRun,
  deleteBatch: number,
): PurgeRun {
  return {
    purge,
    deps,
    now: deps.now ?? (() => new Date()),
    readBatch: deps.readBatch ?? deps.purger.batch?.read ?? 500,
    deleteBatch,
    chunkSize: deps.chunkSize ?? CHUNK_RECORDS,
    earlier: earlierRun.earlier,
    outcomes: earlierRun.outcomes,
    recovered: earlierRun.recovered,
    archived: earlierRun.archived,
    seq: earlierRun.seq,
    resolved: earlierRun.resolved,
    readTotal: earlierRun.archived,
    takenByState: new Map(),
    seen: new Set(),
    metAgain: new Set(),
    readsSent: 0,
    readsSettled: 0,
    forgetting: [],
    failure: undefined,
    writeChain: Promise.resolve(),
    recordChain: Promise.resolve(),
    deleteChain: Promise.resolve(),
    inFlight: [],
  };
}

/** The records an earlier run archived count against their state's cap, place by place. */
export function countEarlierTakes(
  run: PurgeRun,
  places: readonly PurgePlace[],
  archivedByPlace: ReadonlyMap<string, number>,
): void {
  for (const place of places) countTaken(run, place.state, archivedByPlace.get(place.name) ?? 0);
}

/** `records` more of `state` taken (by this run's walk, or archived by an earlier one). */
export function countTaken(run: PurgeRun, state: BackendState, records: number): void {
  run.takenByState.set(state, (run.takenByState.get(state) ?? 0) + records);
}

/** How many more of `state` the purge may take: its cap (the preview's count) less what it took. */
export function capLeft(run: PurgeRun, state: BackendState): number {
  const cap = run.deps.caps?.[state];
  return cap === undefined ? Number.POSITIVE_INFINITY : cap - (run.takenByState.get(state) ?? 0);
}

export function reportProgress(run: PurgeRun): void {
  run.deps.progress?.({
    done: run.resolved,
    total: Math.max(run.purge.total, run.resolved),
    phase: 'purging',
  });
}

/** Forgets the identities of deleted chunks once every read that may still hold them has settled. */
export function forgetSettled(run: PurgeRun): void {
  const { forgetting, seen } = run;
  while (forgetting.length > 0 && forgetting[0]!.afterRead <= run.readsSettled)
    for (const identity of forgetting.shift()!.identities) seen.delete(identity);
}

/**
 * The purge's heartbeat, with `patch`, conditional on this process still owning the purge:
 * another process took it over (it took this one for dead), and this run stops at once.
 */
export async function heartbeat(run: PurgeRun, patch: Partial<PurgeRecord>): Promise<void> {
  const { purge, deps } = run;
  const at = run.now().toISOString();
  const updated = await deps.store.updatePurge(
    purge.id,
    ['archiving'],
    { ...patch, heartbeatAt: at, updatedAt: at },
    deps.owner,
  );
  if (!updated) throw new Error(`purge ${purge.id} is no longer owned by ${deps.owner}`);
}

/**
 * A failure (Redis gone, the store refusing) ends the walk only once the chunks already on their
 * way have settled: none is still being written, recorded or deleted when the caller decides
 * what the purge becomes (released for a later run, or finished as failed).
 */
export async function settleAndThrow(run: PurgeRun, error: unknown): Promise<never> {
  await Promise.allSettled([run.writeChain, run.recordChain, run.deleteChain, ...run.inFlight]);
  throw error;
}
