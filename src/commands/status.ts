import { factsOfKind } from '../backends/kinds.js';
import type {
  DelayedDue,
  DurationPercentiles,
  QueueBackend,
  QueueThroughput,
  RetryLoops,
  StatusOptions,
  SystemStatus,
  SystemType,
  ThroughputSource,
  UnknownDuration,
  UnknownRate,
} from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { formatUtc } from '../blocks/format.js';
import type { Message } from '../blocks/message.js';
import { type QueueContextData, queueContextData } from '../blocks/queue-context.js';
import { type StatusView, statusMessage } from '../blocks/status.js';
import { contextOfQueue } from '../config/queue-context.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { readSightings, type Sightings, withSightings } from '../escalation/sightings.js';
import { type Locale, messages } from '../i18n/index.js';
import { allSystems, parseTarget, resolveSystem, resolveTarget } from '../pipeline/parse.js';
import { newRef } from '../pipeline/ref.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';
import type { LimitRecord, LimitValue } from '../store/store.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const statusFacts = {
  verb: 'status',
  order: 10,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  readPath: true,
} satisfies VerbFacts;

/** `--json` data of `status`, exactly as README documents it. */
export interface StatusData {
  systems: StatusSystemData[];
}

/**
 * One system in `status --json`. A system that could not be read has `ok: false`, `error` (one
 * line), `redis: null` and empty `queues`/`workers`, so scripts can iterate without checks.
 */
export interface StatusSystemData {
  name: string;
  type: SystemType;
  ok: boolean;
  error?: string;
  redis: { usedMemoryBytes: number; maxMemoryBytes: number; maxMemoryPolicy: string } | null;
  queues: {
    name: string;
    waiting: number;
    active: number;
    delayed: number;
    prioritized: number;
    failed: number;
    completed: number;
    isPaused: boolean;
    oldestWaitingSeconds: number | null;
    /**
     * Where the age counts from: `due` (when the job became due), or `firstSeen` (when the
     * monitor first saw the Celery message at the head: a lower bound); null with no age.
     */
    oldestWaitingFrom: 'due' | 'firstSeen' | null;
    /** Who owns the queue and its runbook, on queues the config gives any to. */
    context?: QueueContextData;
    /** BullMQ only: the global concurrency and rate limit in the queue's meta (null: none). */
    limits?: { concurrency: number | null; rateLimit: { max: number; durationMs: number } | null };
    /** Null when the system cannot tell (docs/json.md). */
    throughput: ThroughputData | null;
    /** One queue asked for (`status <system>/<queue>`) only. */
    delayedDue?: DelayedDue;
    /** Celery, with `delayedDue`: how far the walk of `unacked` looked. */
    delayedScan?: { looked: number; of: number; complete: boolean };
  }[];
  workers: { name: string; active?: number }[];
  /** Celery: tasks in a retry loop, from a bounded sample of the messages' `retries` header. */
  retrying?: RetryLoops;
  /** The limits queue-ops set on this system and that are in force (its store; [] without one). */
  limits: { target: string; kind: string; value: LimitValue; setBy: string; expiresAt: string | null }[];
}

/** A queue's throughput in `status --json`: rates per minute, durations in seconds. */
export interface ThroughputData {
  source: ThroughputSource;
  spanSeconds: number;
  /** Null when not known (`unknown` says why), never a 0 that would read as "nothing done". */
  completedPerMinute: number | null;
  failedPerMinute: number | null;
  completed: number | null;
  failed: number | null;
  /** Only when a rate above is null. */
  unknown?: { completed?: UnknownRate; failed?: UnknownRate };
  sampled: number;
  wait: DurationData;
  run: DurationData;
  estimated: boolean;
}

export type DurationData = { p50Seconds: number; p95Seconds: number } | { unknown: UnknownDuration };

/**
 * How far back `status` counts finished jobs, and how many of each queue's newest it times: none
 * when it shows many queues (the rates are a few O(log n) calls a queue; timing 20 jobs of each of
 * 1,000 busy queues made the read several times the plain one, `npm run bench -- throughput`),
 * 200 of each outcome for one queue.
 */
export const THROUGHPUT_SPAN_MS = 5 * 60_000;
export const THROUGHPUT_SAMPLE = { allQueues: 0, oneQueue: 200 } as const;

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const roundOrNull = (n: number | null, digits: number) => (n === null ? null : round(n, digits));

function durationData(d: DurationPercentiles): DurationData {
  return 'p50Ms' in d
    ? { p50Seconds: round(d.p50Ms / 1000, 3), p95Seconds: round(d.p95Ms / 1000, 3) }
    : { unknown: d.unknown };
}

export function throughputData(tp: QueueThroughput | undefined): ThroughputData | null {
  if (!tp) return null;
  return {
    source: tp.source,
    spanSeconds: round(tp.spanMs / 1000, 3),
    completedPerMinute: roundOrNull(tp.completedPerMinute, 2),
    failedPerMinute: roundOrNull(tp.failedPerMinute, 2),
    completed: tp.completed,
    failed: tp.failed,
    ...(tp.unknown ? { unknown: tp.unknown } : {}),
    sampled: tp.sampled,
    wait: durationData(tp.wait),
    run: durationData(tp.run),
    estimated: tp.estimated === true,
  };
}

/** What `status` reads beside the counts: throughput always, delayed jobs by due time for one queue. */
export function statusReadOptions(oneQueue: boolean): StatusOptions {
  return {
    throughput: {
      spanMs: THROUGHPUT_SPAN_MS,
      sample: oneQueue ? THROUGHPUT_SAMPLE.oneQueue : THROUGHPUT_SAMPLE.allQueues,
    },
    ...(oneQueue ? { delayedDue: true } : {}),
  };
}

/** One system's outcome, as the status builder receives it. */
export type SystemOutcome =
  | { name: string; type: SystemType; ok: true; status: SystemStatus }
  | { name: string; type: SystemType; ok: false; error: string; cause?: OpsError };

export { STATUS_TIMEOUT_MS, systemTimeoutMs } from '../backends/timeout.js';

/**
 * Reads every backend in parallel; one that fails (down, hanging, unexpected error) becomes an
 * `ok: false` outcome and never stops the others.
 */
export async function readSystems(
  ctx: CommandContext,
  request: Request,
  targets: { system: string; backend: QueueBackend; queues?: string[] }[],
  options?: StatusOptions,
): Promise<SystemOutcome[]> {
  const t = messages(request.locale);
  const settled = await Promise.allSettled(
    targets.map(({ system, backend, queues }) => askSystem(ctx, system, backend.status(queues, options))),
  );
  return settled.map((result, index): SystemOutcome => {
    const { system, backend } = targets[index]!;
    if (result.status === 'fulfilled') {
      return { name: system, type: backend.type, ok: true, status: result.value };
    }
    const reason: unknown = result.reason;
    if (isOpsError(reason)) {
      return { name: system, type: backend.type, ok: false, error: t.errors.describe(reason), cause: reason };
    }
    const ref = newRef();
    ctx.logger?.error({ err: reason, ref, system }, 'status of one system failed unexpectedly');
    return { name: system, type: backend.type, ok: false, error: t.common.somethingWentWrong(ref) };
  });
}

/** The exact `--json` shape: no key beyond the documented ones. */
export function toStatusData(
  outcomes: readonly SystemOutcome[],
  queueContext: StatusView['queueContext'] = [],
  records: readonly LimitRecord[] = [],
): StatusData {
  // A queue's limit (BullMQ) only for the queues shown; a task's (Celery) whatever is shown.
  const limitsOf = (o: SystemOutcome) =>
    records
      .filter(
        (r) =>
          r.system === o.name &&
          (factsOfKind(o.type).limitTarget !== 'queue' ||
            !o.ok ||
            o.status.queues.some((q) => q.name === r.target)),
      )
      .map((r) => ({
        target: r.target,
        kind: r.kind,
        value: r.value,
        setBy: r.setBy,
        expiresAt: r.expiresAt ?? null,
      }));
  return {
    systems: outcomes.map((o): StatusSystemData => {
      if (!o.ok)
        return {
          name: o.name,
          type: o.type,
          ok: false,
          error: o.error,
          redis: null,
          queues: [],
          workers: [],
          limits: limitsOf(o),
        };
      const { redis, queues, workers } = o.status;
      return {
        name: o.name,
        type: o.type,
        ok: true,
        redis: {
          usedMemoryBytes: redis.usedMemoryBytes,
          maxMemoryBytes: redis.maxMemoryBytes,
          maxMemoryPolicy: redis.maxMemoryPolicy,
        },
        queues: queues.map((q) => {
          const context = queueContextData(contextOfQueue(queueContext, o.name, q.name));
          return {
            name: q.name,
            waiting: q.waiting,
            active: q.active,
            delayed: q.delayed,
            prioritized: q.prioritized,
            failed: q.failed,
            completed: q.completed,
            isPaused: q.isPaused,
            oldestWaitingSeconds: q.oldestWaitingSeconds,
            oldestWaitingFrom: q.oldestWaitingSeconds === null ? null : (q.oldestWaitingFrom ?? 'due'),
            throughput: throughputData(q.throughput),
            ...(q.delayedDue ? { delayedDue: q.delayedDue } : {}),
            ...(q.delayedScan ? { delayedScan: q.delayedScan } : {}),
            ...(context ? { context } : {}),
            ...(q.limits
              ? { limits: { concurrency: q.limits.concurrency, rateLimit: q.limits.rateLimit } }
              : {}),
          };
        }),
        workers: workers.map((w) =>
          w.active === undefined ? { name: w.name } : { name: w.name, active: w.active },
        ),
        ...(o.status.retrying ? { retrying: o.status.retrying } : {}),
        limits: limitsOf(o),
      };
    }),
  };
}

/**
 * `statusMessage`, rendered once for commands that share a snapshot. Commands typed together share
 * one Redis read (`coalesceStatus`), so two hundred `/queue status` in an incident got the same
 * status objects and each rendered them again: 200 renders in one turn of the event loop, 100-200
 * ms with their garbage, while Slack requests that arrived meanwhile waited to be acknowledged.
 * The last message is reused while nothing it shows differs: every system read fine into the very
 * same status objects, and scope, locale and the "updated" time as shown (to the second) match.
 * A message is plain data that nothing downstream changes, so sharing it is safe.
 */
export function statusRenderer(): (view: StatusView, locale: Locale) => Message {
  let last: { view: StatusView; locale: Locale; updated: string; message: Message } | undefined;
  const sameSnapshot = (a: StatusView, b: StatusView) =>
    a.scope === b.scope &&
    a.thresholds === b.thresholds &&
    a.queueContext === b.queueContext &&
    JSON.stringify(a.limits ?? []) === JSON.stringify(b.limits ?? []) &&
    a.systems.length === b.systems.length &&
    a.systems.every((sys, i) => {
      const other = b.systems[i]!;
      return sys.ok && other.ok && sys.status === other.status && sys.name === other.name;
    });
  return (view, locale) => {
    const updated = formatUtc(view.generatedAt, locale);
    if (last && last.locale === locale && last.updated === updated && sameSnapshot(last.view, view))
      return last.message;
    const message = statusMessage(view, locale);
    last = { view, locale, updated, message };
    return message;
  };
}

const renderStatus = statusRenderer();

/**
 * The limits queue-ops set that are in force, from its store: a Celery task's rate is not in Redis,
 * and a BullMQ limit's `--for` end is only known here. A store that cannot answer costs the status
 * nothing but these.
 */
async function activeLimits(ctx: CommandContext): Promise<LimitRecord[]> {
  try {
    return (await ctx.store?.activeLimits?.()) ?? [];
  } catch (error) {
    ctx.logger?.warn({ err: error }, 'could not read the limits in force; status shows none');
    return [];
  }
}

/**
 * The monitor's stored sightings of Celery head messages (the age of a Celery queue), read only:
 * a store that cannot answer leaves those ages unknown and costs the status nothing else.
 */
async function monitorSightings(ctx: CommandContext, systems: readonly string[]): Promise<Sightings> {
  try {
    return await readSightings(ctx.store?.escalation, systems);
  } catch (error) {
    ctx.logger?.warn({ err: error }, "could not read the monitor's samples; Celery ages shown as unknown");
    return new Map();
  }
}

/**
 * `status [system[/queue]]`. The reply is ok while at least one asked-for system answered; when
 * every one of them is down the command failed (`ok: false`, code `RedisUnavailable`) but the
 * message and data still show each system's error.
 */
export const statusCommand: CommandDefinition = {
  ...statusFacts,
  async run(ctx: CommandContext, args: string[], request: Request): Promise<Reply> {
    const t = messages(request.locale);
    if (args.length > 1) {
      throw new OpsError(ErrorCode.UsageError, {
        message: t.commands.tooManyArguments(args[1]!),
        usage: t.commands.usage.status,
      });
    }
    const scope = args[0];
    let targets: { system: string; backend: QueueBackend; queues?: string[] }[];
    let earlyFailure: SystemOutcome | undefined;
    if (scope === undefined) {
      targets = allSystems(ctx);
    } else {
      const target = parseTarget(scope);
      if (target.queue === undefined) {
        // resolveTarget, not resolveSystem: a queue named without its system is pointed at it.
        targets = [await resolveTarget(ctx, target)];
      } else {
        const { system, backend } = resolveSystem(ctx, target.system);
        try {
          const resolved = await askSystem(ctx, system, resolveTarget(ctx, target));
          targets = [{ system, backend, queues: [resolved.queue!] }];
        } catch (error) {
          // Discovering the queue list needs the Redis; when it is down, that is a system error.
          if (!isOpsError(error) || error.code !== ErrorCode.RedisUnavailable) throw error;
          targets = [];
          earlyFailure = {
            name: system,
            type: backend.type,
            ok: false,
            error: t.errors.describe(error),
            cause: error,
          };
        }
      }
    }

    const oneQueue = targets.length === 1 && targets[0]!.queues?.length === 1;
    const [read, limits, sightings] = await Promise.all([
      earlyFailure ? [earlyFailure] : readSystems(ctx, request, targets, statusReadOptions(oneQueue)),
      activeLimits(ctx),
      monitorSightings(
        ctx,
        targets.filter((t) => t.backend.facts.waitingAgeFromSightings).map((t) => t.system),
      ),
    ]);
    const now = ctx.now().getTime();
    const outcomes = read.map(
      (o): SystemOutcome =>
        o.ok ? { ...o, status: withSightings(o.status, sightings.get(o.name), now) } : o,
    );
    const data = toStatusData(outcomes, ctx.config.systems, limits);
    const message = renderStatus(
      {
        generatedAt: ctx.now(),
        scope: scope ?? '',
        systems: outcomes,
        queueContext: ctx.config.systems,
        limits,
      },
      request.locale,
    );
    const down = outcomes.filter((o) => !o.ok);
    if (outcomes.length > 0 && down.length === outcomes.length) {
      const first = down[0] as Extract<SystemOutcome, { ok: false }>;
      return {
        ok: false,
        message,
        data,
        visibility: answerVisibility(statusFacts),
        error: {
          code: ErrorCode.RedisUnavailable,
          params: { system: down.map((o) => o.name).join(', '), reason: first.cause?.params.reason },
        },
      };
    }
    return { ok: true, message, data, visibility: answerVisibility(statusFacts) };
  },
};
