import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type Sightings, withSightings } from '../backends/head-sightings.js';
import type { SystemStatus } from '../backends/queue-backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import type { AuditEntry } from '../store/store.js';

/** The queue states exported as `queue_ops_queue_jobs{state}`. */
export const EXPORTED_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'failed',
  'completed',
] as const;

/** Job durations from 10 ms (a push sent) to an hour (a retention run of `maintenance`). */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** What the first read after start counts as "finished since the previous read". */
const FIRST_SPAN_MS = 60_000;

export interface MetricsDeps {
  backends: Pick<BackendRegistry, 'names' | 'get'>;
  /** How long one read of a system serves scrapes (`metrics.cacheSeconds`). */
  cacheSeconds: number;
  now?: () => number;
  /** Open alerts by severity, when the escalation monitor runs in this process. */
  openAlerts?: () => Promise<Record<string, number>>;
  /** Posts waiting in the outbox, when there is one. */
  outboxDepth?: () => Promise<number>;
  /**
   * The monitor's stored sightings of Celery head messages (one source of a Celery queue's age,
   * as `status` reads it); without it, those ages are absent (unknown).
   */
  sightings?: (systems: readonly string[]) => Promise<Sightings>;
  /** Node's own process metrics (off in tests that build many registries). */
  processMetrics?: boolean;
}

/** What the rest of the bot tells the metrics, and what `/metrics` serves. */
export interface Metrics {
  registry: Registry;
  /** Prometheus text format. */
  render(): Promise<string>;
  contentType: string;
  /** One command answered: its verb and how long it took. */
  observeCommand(verb: string, seconds: number): void;
  /** Every audit entry: actions and approvals are counted from the trail itself. */
  observeAudit(entry: Pick<AuditEntry, 'action' | 'outcome' | 'params'>): void;
  /** Whether each system's Redis answered the last read (for `/readyz`'s body). */
  /**
   * Which watched systems answered the last read. `waitMs`: how long to wait for a read in
   * flight before answering with the one before it (a system not read yet is left out).
   */
  systemsUp(waitMs?: number): Promise<Record<string, boolean>>;
}

interface Snapshot {
  at: number;
  systems: { name: string; status?: SystemStatus }[];
}

/**
 * Queue gauges come from the same pipelined read as `status` (one round trip per system), cached
 * for `cacheSeconds` and shared by concurrent scrapes, so queue-ops doubles as a BullMQ and
 * Celery exporter without becoming one more load on the Redis it watches.
 */
export function createMetrics(deps: MetricsDeps): Metrics {
  const now = deps.now ?? Date.now;
  const registry = new Registry();
  if (deps.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  let snapshot: Snapshot | undefined;
  let reading: Promise<Snapshot> | undefined;

  const observeThroughput = createThroughputMetrics(registry, current);
  let lastReadAt: number | undefined;

  async function read(): Promise<Snapshot> {
    const names = deps.backends.names();
    const at = now();
    // Exactly the span since the previous read, so no finished job is counted twice.
    const spanMs = lastReadAt === undefined ? FIRST_SPAN_MS : Math.max(1, at - lastReadAt);
    lastReadAt = at;
    const options = { throughput: { spanMs, sample: 50, raw: true } };
    const sighted = names.filter((name) => deps.backends.get(name)?.facts.waitingAgeFromSightings);
    const [systems, sightings] = await Promise.all([
      Promise.all(
        names.map(async (name) => {
          try {
            const status = await deps.backends.get(name)!.status(undefined, options);
            observeThroughput(name, status);
            return { name, status };
          } catch {
            // A system that is down is exported as down, never as a failed scrape.
            return { name };
          }
        }),
      ),
      sighted.length > 0 && deps.sightings
        ? deps.sightings(sighted).catch(() => undefined)
        : Promise.resolve(undefined),
    ]);
    const seen = (name: string, status: SystemStatus) => withSightings(status, sightings?.get(name), now());
    return {
      at,
      systems: systems.map((s) => (s.status ? { name: s.name, status: seen(s.name, s.status) } : s)),
    };
  }

  function current(): Promise<Snapshot> {
    if (snapshot && now() - snapshot.at < deps.cacheSeconds * 1000) return Promise.resolve(snapshot);
    reading ??= read()
      .then((fresh) => {
        snapshot = fresh;
        return fresh;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  }

  registerQueueGauges(registry, current);

  const { commandSeconds, actions, approvals, auditEntries } = createBotMetrics(registry, deps);

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    observeCommand(verb, seconds) {
      commandSeconds.observe({ verb }, seconds);
    },
    observeAudit(entry) {
      auditEntries.inc();
      const requestAction = typeof entry.params?.action === 'string' ? entry.params.action : undefined;
      if (entry.action.startsWith('action.')) {
        actions.inc({ action: entry.action.slice('action.'.length), outcome: entry.outcome });
      } else if (entry.action.startsWith('request.') && requestAction) {
        approvals.inc({ action: requestAction, outcome: entry.outcome });
      }
    },
    systemsUp: (waitMs = Number.POSITIVE_INFINITY) => systemsUpWithin(current, () => snapshot, waitMs),
  };
}

/**
 * The counters and the histogram of finished jobs; the function returned feeds them from each
 * read. Registered before the gauges, so the read that feeds them comes first.
 */
function createThroughputMetrics(registry: Registry, current: () => Promise<Snapshot>) {
  const jobDuration = new Histogram({
    name: 'queue_job_duration_seconds',
    help: 'Wait (from when a job could run to when a worker took it) and run time of finished jobs, by phase; observed from the newest finished jobs of each read (at most 50 per queue and outcome), so _count counts the jobs timed, not every job',
    labelNames: ['system', 'queue', 'phase'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
    // Rendered before the gauges: the read that feeds it must come first.
    async collect() {
      await current();
    },
  });
  const jobsCompleted = new Counter({
    name: 'queue_jobs_completed_total',
    help: 'Jobs completed, counted by queue-ops from BullMQ’s metrics when the queue collects them, else from the finished jobs (and Celery results) seen since its previous read',
    labelNames: ['system', 'queue'] as const,
    registers: [registry],
    // Rendered before the gauges: the read that feeds it must come first.
    async collect() {
      await current();
    },
  });
  const jobsFailed = new Counter({
    name: 'queue_jobs_failed_total',
    help: 'Jobs failed, counted as queue_jobs_completed_total is',
    labelNames: ['system', 'queue'] as const,
    registers: [registry],
    // Rendered before the gauges: the read that feeds it must come first.
    async collect() {
      await current();
    },
  });
  /** BullMQ metrics' running totals as last read, per `system/queue`: the counters add what they grew by. */
  const lastTotals = new Map<string, { completed: number; failed: number }>();

  /** Adds what finished since the previous read to the counters and the histogram. */
  function observeThroughput(system: string, status: SystemStatus) {
    for (const queue of status.queues) {
      const tp = queue.throughput;
      if (!tp) continue;
      const labels = { system, queue: queue.name };
      const key = `${system}/${queue.name}`;
      if (tp.totals) {
        const before = lastTotals.get(key);
        lastTotals.set(key, tp.totals);
        // A total that went down was reset (the queue obliterated): count from 0 again.
        const grew = (now: number, then: number | undefined) =>
          then === undefined || now < then ? now : now - then;
        jobsCompleted.inc(labels, grew(tp.totals.completed, before?.completed));
        jobsFailed.inc(labels, grew(tp.totals.failed, before?.failed));
      } else {
        // An outcome the queue keeps nothing of is not counted: adding 0 would claim it was seen.
        if (tp.completed !== null) jobsCompleted.inc(labels, tp.completed);
        if (tp.failed !== null) jobsFailed.inc(labels, tp.failed);
      }
      for (const d of tp.durations ?? []) {
        jobDuration.observe({ ...labels, phase: 'wait' }, d.waitMs / 1000);
        jobDuration.observe({ ...labels, phase: 'run' }, d.runMs / 1000);
      }
    }
  }

  return observeThroughput;
}

/** The gauges of queues and systems, from the shared snapshot. */
function registerQueueGauges(registry: Registry, current: () => Promise<Snapshot>) {
  new Gauge({
    name: 'queue_ops_queue_jobs',
    help: 'Jobs in a queue by state, from the same read as /queue status',
    labelNames: ['system', 'queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const { systems } = await current();
      this.reset();
      for (const { name, status } of systems) {
        for (const queue of status?.queues ?? []) {
          for (const state of EXPORTED_STATES) {
            this.set({ system: name, queue: queue.name, state }, queue[state]);
          }
        }
      }
    },
  });

  new Gauge({
    name: 'queue_ops_queue_oldest_waiting_seconds',
    help: 'Age of the next job to be picked up (absent when nothing waits or the age is unknown)',
    labelNames: ['system', 'queue'] as const,
    registers: [registry],
    async collect() {
      const { systems } = await current();
      this.reset();
      for (const { name, status } of systems) {
        for (const queue of status?.queues ?? []) {
          if (queue.oldestWaitingSeconds !== null) {
            this.set({ system: name, queue: queue.name }, queue.oldestWaitingSeconds);
          }
        }
      }
    },
  });

  new Gauge({
    name: 'queue_ops_queue_paused',
    help: '1 when the queue is paused',
    labelNames: ['system', 'queue'] as const,
    registers: [registry],
    async collect() {
      const { systems } = await current();
      this.reset();
      for (const { name, status } of systems) {
        for (const queue of status?.queues ?? [])
          this.set({ system: name, queue: queue.name }, queue.isPaused ? 1 : 0);
      }
    },
  });

  /** A gauge per system from the shared snapshot; `undefined` leaves the system out. */
  const systemGauge = (
    name: string,
    help: string,
    value: (status: SystemStatus | undefined) => number | undefined,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['system'] as const,
      registers: [registry],
      async collect() {
        const { systems } = await current();
        this.reset();
        for (const system of systems) {
          const v = value(system.status);
          if (v !== undefined) this.set({ system: system.name }, v);
        }
      },
    });
  systemGauge('queue_ops_workers', 'Live workers seen on the system', (s) => s?.workers.length);
  systemGauge(
    'queue_ops_redis_memory_used_bytes',
    'INFO memory used_memory of the system’s Redis',
    (s) => s?.redis.usedMemoryBytes,
  );
  systemGauge(
    'queue_ops_redis_memory_max_bytes',
    'INFO memory maxmemory of the system’s Redis (0: no limit)',
    (s) => s?.redis.maxMemoryBytes,
  );
  systemGauge(
    'queue_ops_system_up',
    '1 when the system’s Redis answered the last read, 0 when it did not',
    (s) => (s ? 1 : 0),
  );
}

/** The bot's own metrics: commands, actions, approvals, the audit, open alerts, the outbox. */
function createBotMetrics(registry: Registry, deps: MetricsDeps) {
  const commandSeconds = new Histogram({
    name: 'queue_ops_command_duration_seconds',
    help: 'Time from a command arriving to its answer, by verb',
    labelNames: ['verb'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const actions = new Counter({
    name: 'queue_ops_actions_total',
    help: 'Actions run, by action and outcome (done, failed, interrupted)',
    labelNames: ['action', 'outcome'] as const,
    registers: [registry],
  });

  const approvals = new Counter({
    name: 'queue_ops_approvals_total',
    help: 'Approval request steps, by action and outcome (requested, approved, rejected, expired…)',
    labelNames: ['action', 'outcome'] as const,
    registers: [registry],
  });

  const auditEntries = new Counter({
    name: 'queue_ops_audit_entries_total',
    help: 'Audit entries written by this process',
    registers: [registry],
  });

  new Gauge({
    name: 'queue_ops_alerts_open',
    help: 'Escalation alerts open now, by severity',
    labelNames: ['severity'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const open = (await deps.openAlerts?.().catch(() => undefined)) ?? {};
      for (const severity of ['critical', 'warning', 'info']) this.set({ severity }, open[severity] ?? 0);
    },
  });

  new Gauge({
    name: 'queue_ops_outbox_depth',
    help: 'Slack posts waiting in the outbox for Slack to answer again',
    registers: [registry],
    async collect() {
      this.set((await deps.outboxDepth?.().catch(() => undefined)) ?? 0);
    },
  });

  return { commandSeconds, actions, approvals, auditEntries };
}

/**
 * Which systems answered the latest read; after `waitMs`, what the read before it found (see
 * `Metrics.systemsUp`).
 */
async function systemsUpWithin(
  current: () => Promise<Snapshot>,
  last: () => Snapshot | undefined,
  waitMs: number,
): Promise<Record<string, boolean>> {
  const upOf = ({ systems }: Snapshot) =>
    Object.fromEntries(systems.map((s) => [s.name, s.status !== undefined]));
  const fresh = current().then(upOf);
  if (!Number.isFinite(waitMs)) return await fresh;
  // A read held up by a Redis that hangs (up to its command timeout) answers with what the
  // last read found; the read goes on and the next caller gets it.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  fresh.catch(() => undefined);
  try {
    return (await Promise.race([fresh, late])) ?? (last() ? upOf(last()!) : {});
  } finally {
    clearTimeout(timer);
  }
}
