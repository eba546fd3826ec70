/**
 * The purge of the contract: a purger's bounded reads, deletes and restores of one queue, the
 * places it walks, and how far an undo has come.
 */

import type { PurgeSelection } from '../job-filter.js';

/** What `purge` may take: `all` is every state the system has. */
export type PurgeState = 'waiting' | 'failed' | 'delayed';

/**
 * One Redis structure a purge empties, in the order it is walked. `list` and `zset` are read from
 * where workers take next (offset = entries read and not yet deleted); `keys` is a fixed set of
 * keys listed when the purge starts (Celery's result backend).
 */
export interface PurgePlace {
  state: PurgeState;
  /** As stored in each archived line (BullMQ: the key suffix `wait`; Celery: the list's key). */
  name: string;
  kind: 'list' | 'zset' | 'keys';
  /** Entries when the purge started. */
  size: number;
}

/**
 * One archived record: its identity (job id, message digest, result key), and where the delete
 * compares more than that, `check`: what it compares (a Celery result's value digest, a
 * message's own bytes).
 */
export interface PurgeItem {
  identity: string;
  check?: string | Buffer;
}

/**
 * What one read returns: the records in the order they go, and their archive lines (UTF-8 JSON,
 * one per record, each ending with a newline) in blocks of whole lines, as the archive file
 * stores them: a purge does no per-record string or JSON work on its way to the archive.
 */
export interface PurgeBatch {
  items: PurgeItem[];
  lines: Buffer[];
}

export interface PurgePreview {
  total: number;
  byState: Partial<Record<PurgeState, number>>;
  /** The next few to go: name and age only (never data or arguments). */
  sample: { name: string; ageSeconds: number | null }[];
  /** Estimated gzip size of the archive, from a sample. */
  estimatedBytes: number;
  /** With a selection (a filter, `--keep`): what the states hold in all, so `outOf - total` are left. */
  outOf?: number;
  /** States asked for that this system does not have, with a reason code (Celery `delayed`: `EtaTasksLiveInWorkers`). */
  unsupported?: Partial<Record<PurgeState, string>>;
}

/**
 * How far an undo has put its archive back: `position` lines of its restore sequence (the
 * archive's files last to first, each file's lines last to first, moved ones left out) are
 * handled, `restored` of them were put back. Kept in the watched Redis itself, written by the
 * same script that writes the jobs, so the two can never disagree: a Redis restarted without
 * its data lost both, and the undo starts over; one restarted from its append-only file kept both.
 * Dropped once the undo is done.
 */
export interface UndoProgress {
  position: number;
  restored: number;
}

/** One step of an undo: the marker must be at `from` (else `UndoMarkerMoved`), and moves past these lines. */
export interface UndoStep {
  purgeId: string;
  from: number;
  /** `restored` before these lines (the marker keeps the running total). */
  restoredBefore: number;
}

/**
 * A purge's access to one queue, over a connection of its own. Every method is bounded: reads
 * and deletes take at most `limit` entries, and each Redis call stays in the low milliseconds
 * so the workers and producers on that Redis keep running. Nothing here needs Redis memory:
 * deletes are EVAL (no shebang), LREM/ZREM/LTRIM/UNLINK, which a Redis at maxmemory still runs.
 */
export interface QueuePurger {
  preview(states: PurgeState[]): Promise<PurgePreview>;
  places(states: PurgeState[]): Promise<PurgePlace[]>;
  read(place: PurgePlace, offset: number, limit: number): Promise<PurgeBatch>;
  /**
   * Deletes each item only where it still is; true for the ones removed. The command is sent
   * before this returns (on the connection `read` uses), so a read called after it runs after it.
   */
  remove(place: PurgePlace, items: PurgeItem[]): Promise<boolean[]>;
  /** Which place an archived line belongs to, and its record (identity and check). */
  parse(line: string): PurgeItem & { place: string };
  /** Identities among these lines that exist again in Redis (undo must not overwrite them). */
  conflicts(lines: string[]): Promise<string[]>;
  /**
   * Puts the lines back, in the order given, each where it was; one whose identity exists is
   * left alone and returned in `existing`. With `step`, each Redis call that puts lines back also
   * moves the undo's marker (see {@link UndoStep}) in the same atomic step, and only if the marker
   * still says `step.from`: an undo cut short by a lost Redis or a killed process resumes exactly
   * where Redis says it stopped, and two processes can never both put one line back.
   */
  restore(lines: string[], step?: UndoStep): Promise<{ restored: number; existing: string[] }>;
  /** Where an undo of `purgeId` stands in Redis (zero when none began or Redis lost it all). */
  undoProgress(purgeId: string): Promise<UndoProgress>;
  /**
   * Drops the undo's marker, once the store says the undo is done (never before: a marker gone
   * while the undo could still resume would start it over). It has no ttl: an undo may wait for
   * its Redis, or be resumed after a refusal, for as long as the archive is kept.
   */
  clearUndoProgress(purgeId: string): Promise<void>;
  /** Facts the archive manifest keeps (prefix, layout). */
  meta(): Record<string, unknown>;
  /** Entries per read and per delete call when the system needs other sizes than the defaults. */
  batch?: { read: number; delete: number };
  close(): Promise<void>;
}

/** Purging a queue, with an archive to undo it from. */
export interface PurgeAbilities {
  /**
   * A purger for one queue (on systems that can purge), on a connection of its own (close it). With a
   * selection that takes part of a state, its places are what the selection picks (a system that
   * cannot pick says `NotSupported`, never purges more).
   */
  purger?(queue: string, selection?: PurgeSelection): Promise<QueuePurger>;
}
