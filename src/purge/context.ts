import { hostname } from 'node:os';
import type { AuditRecorder } from '../approvals/service.js';
import { filterFromParams, type PurgeSelection } from '../backends/job-filter.js';
import type { PurgeState, QueuePurger } from '../backends/queue-backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import type { Config } from '../config/schema.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { type Catalog, type Locale, messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { ActionRequest, PurgeRecord, Store } from '../store/store.js';

/**
 * What the purge service's parts share (service.ts composes them): its dependencies, this
 * process's identity, and the few reads and writes more than one part makes. The parts: a purge's
 * preview and execution (execute.ts), undo (undo.ts), finishing what a dead process left
 * (restart-recovery.ts), and the archive's retention (retention.ts).
 */

/**
 * The archive's file format (gzip off the main thread, fsync, read back), loaded when a purge, an
 * undo or the retention sweep touches an archive: every start runs `recover()`, which finds nothing
 * to do nearly always, and should not initialise gzip, readline and a worker pool for that.
 */
export const loadArchive = () => import('../archive/archive.js');

/** The purge and undo engine (and the archive), loaded when one runs. */
export const loadEngine = () => import('./engine.js');

/** What `purge` answers with in `data.request.result` (README: the CLI contract). */
export interface PurgeResult {
  purged: number;
  archived: number;
  purgeId: string;
  archivePath: string;
  /**
   * Jobs of the purged states that arrived after the preview, beyond its count of each state
   * (the most a purge takes, oldest first), and were left where they are. Absent for a request
   * stored before the counts were kept.
   */
  newSincePreview?: number;
}

export interface UndoResult {
  restored: number;
  /**
   * Archived jobs left as they are because their id exists in Redis again (a Redis back from an
   * older snapshot, a failover, a producer): none is ever put back twice.
   */
  alreadyThere: number;
  purgeId: string;
  archivePath: string;
}

export interface PurgesDeps {
  store: Store;
  audit: AuditRecorder;
  config: Pick<Config, 'archive'>;
  backends: () => BackendRegistry;
  logger?: Logger;
  now?: () => Date;
  /** `host:pid`; injectable for tests. */
  owner?: string;
  /** The config's `locale`: previews and outcomes stored with the request are written in it. */
  locale?: Locale;
  /** Engine sizes (tests use small ones to make many chunks). */
  chunkSize?: number;
  /** How long without a heartbeat a purge owned by another host is taken for dead. Default 60 s. */
  staleAfterMs?: number;
  /**
   * Told of a request recovery settled, as the approvals tell their listeners of every change
   * (its Slack message is redrawn, the App Home refreshed). Never throws.
   */
  requestChanged?: (request: ActionRequest) => Promise<void>;
}

/** One purge service: its dependencies, resolved once. */
export interface PurgesContext {
  readonly deps: PurgesDeps;
  readonly now: () => Date;
  /** `host:pid` of this process: every write of a purge's row it runs is conditional on it. */
  readonly owner: string;
  /** The purge strings, in the config's locale. */
  readonly t: Catalog['purge'];
  /** Undos this process is running now: a row of its own not among them was left by a run that ended. */
  readonly runningUndos: Set<string>;
}

export function purgesContext(deps: PurgesDeps): PurgesContext {
  return {
    deps,
    now: deps.now ?? (() => new Date()),
    owner: deps.owner ?? `${hostname()}:${process.pid}`,
    t: messages(deps.locale ?? 'en').purge,
    runningUndos: new Set(),
  };
}

/** Who recovery and retention act as in the audit. */
export const SYSTEM_ACTOR = { actorId: 'queue-ops', actorName: 'queue-ops', via: 'cli' as const };

/** Is the process `host:pid` gone? Only answerable on this host; elsewhere, staleness decides. */
export function ownerGone(owner: string | undefined): boolean | undefined {
  if (!owner) return true;
  const at = owner.lastIndexOf(':');
  const host = owner.slice(0, at);
  const pid = Number(owner.slice(at + 1));
  if (host !== hostname() || !Number.isInteger(pid)) return undefined;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** What a failure is recorded as: its code, or its message. */
export function failureReason(error: unknown): string {
  return isOpsError(error) ? error.code : String((error as Error)?.message ?? error);
}

/** The purger of one queue (its own Redis connections); the caller closes it. */
export async function purgerFor(
  ctx: PurgesContext,
  system: string,
  queue: string,
  selection?: PurgeSelection,
): Promise<QueuePurger> {
  const backend = ctx.deps.backends().get(system);
  if (!backend) throw new OpsError(ErrorCode.UnknownSystem, { system, valid: ctx.deps.backends().names() });
  if (!backend.purger)
    throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'purge' });
  return await backend.purger(queue, selection);
}

/**
 * The part of its states a purge takes, from its request (the purge's id is its request's): a
 * resumed purge selects as the approved one did, never more. Checked as data.
 */
export async function selectionOf(
  ctx: PurgesContext,
  purgeId: string,
  params?: Record<string, unknown>,
): Promise<PurgeSelection | undefined> {
  const stored = params ?? (await ctx.deps.store.getRequest(purgeId))?.params ?? {};
  const filter = filterFromParams(stored.filter);
  const keep = stored.keep;
  if (keep !== undefined && !(Number.isInteger(keep) && (keep as number) >= 0))
    throw new Error(`purge ${purgeId}: bad keep ${String(keep)}`);
  if (!filter && keep === undefined) return undefined;
  return { ...(filter ? { filter } : {}), ...(keep !== undefined ? { keep: keep as number } : {}) };
}

/**
 * The most each state gives up (its preview's count, `params.caps`), from the purge's request,
 * checked as data; undefined for a request stored before the counts were kept.
 */
export async function capsOf(
  ctx: PurgesContext,
  purgeId: string,
  params?: Record<string, unknown>,
): Promise<Partial<Record<PurgeState, number>> | undefined> {
  const stored = params ?? (await ctx.deps.store.getRequest(purgeId))?.params ?? {};
  const caps = stored.caps;
  if (caps === undefined) return undefined;
  if (typeof caps !== 'object' || caps === null) throw new Error(`purge ${purgeId}: bad caps`);
  const out: Partial<Record<PurgeState, number>> = {};
  for (const [state, count] of Object.entries(caps)) {
    if (
      !['waiting', 'failed', 'delayed'].includes(state) ||
      !Number.isInteger(count) ||
      (count as number) < 0
    )
      throw new Error(`purge ${purgeId}: bad cap ${state}`);
    out[state as PurgeState] = count as number;
  }
  return out;
}

export const resultOf = (record: PurgeRecord): PurgeResult => ({
  purged: record.purged,
  archived: record.archived,
  purgeId: record.id,
  archivePath: record.archivePath,
});

/**
 * The request of a purge or undo finished at recovery says so, whatever the dead process (or
 * one that lost its Redis: `PurgeInterrupted`) left it as: done, and no error beside it.
 */
export async function settleRequest(ctx: PurgesContext, id: string, result: PurgeResult | UndoResult) {
  const at = ctx.now().toISOString();
  const settled = await ctx.deps.store.transitionRequest(id, ['executing', 'interrupted', 'failed'], {
    status: 'done',
    result: { ...result },
    error: null,
    finishedAt: at,
    updatedAt: at,
  });
  // Its message still says running, interrupted or failed until it is redrawn.
  if (settled) await ctx.deps.requestChanged?.(settled);
}

/** The request of an undo that recovery could not finish says why (it said "goes on by itself"). */
export async function failRequest(ctx: PurgesContext, id: string, reason: string) {
  const at = ctx.now().toISOString();
  const failed = await ctx.deps.store
    .transitionRequest(id, ['executing', 'interrupted', 'failed'], {
      status: 'failed',
      error: reason,
      finishedAt: at,
      updatedAt: at,
    })
    .catch(() => undefined);
  if (failed) await ctx.deps.requestChanged?.(failed);
}
