import type { OpsError } from '../../errors.js';
import type {
  LiveWorker,
  PoolChange,
  RateLimitAnswer,
  RevokeOutcome,
  RunningWork,
  WorkerPool,
  WorkerRateLimit,
  WorkerRestart,
} from '../queue-backend.js';
import type { BroadcastResult, PidboxClient } from './pidbox.js';

/**
 * Celery's remote control beyond inspection: the pool (`stats`, `pool_grow`, `pool_shrink`,
 * `autoscale`), running tasks (`active`) and `revoke`, as `celery control …` sends them.
 */
export interface CeleryControl {
  pool(): Promise<WorkerPool[]>;
  resizePool(processes: number): Promise<PoolChange[]>;
  running(): Promise<RunningWork[]>;
  revoke(
    ids: readonly string[],
    options: { terminate: boolean; signal?: 'TERM' | 'KILL' },
  ): Promise<RevokeOutcome>;
  liveWorkers(): Promise<LiveWorker[]>;
  poolRestartsEnabled(workers: readonly string[]): Promise<Map<string, boolean>>;
  restartWorkers(
    targets: readonly { worker: string; method: 'pool_restart' | 'shutdown' }[],
  ): Promise<WorkerRestart[]>;
  taskRateLimits(task: string): Promise<{ workers: WorkerRateLimit[]; tasks: string[] }>;
  setTaskRateLimit(task: string, rates: readonly WorkerRateLimit[]): Promise<RateLimitAnswer[]>;
}

export interface CeleryControlDeps {
  pidbox: PidboxClient;
  /** The system's queues: only workers consuming one of them belong to its pool. */
  listQueues: () => Promise<string[]>;
  timeoutMs: number;
  /** Turns a Redis failure into the system's `RedisUnavailable`. */
  unavailable: (error: unknown) => OpsError;
  /** How long a pool change may take to show in `stats`; default 5 s. */
  settleMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);

/** The text of a control reply: `{ok: "…"}` or `{error: "…"}`. */
export function replyText(reply: unknown): { ok: boolean; text: string } {
  if (isObject(reply) && 'ok' in reply) return { ok: true, text: String(reply.ok) };
  if (isObject(reply) && 'error' in reply) return { ok: false, text: String(reply.error) };
  return { ok: false, text: JSON.stringify(reply) ?? 'no answer' };
}

/** A worker's pool from its `stats` reply; undefined when the reply is not one. */
export function poolOfStats(worker: string, stats: unknown): WorkerPool | undefined {
  if (!isObject(stats)) return undefined;
  const pool = isObject(stats.pool) ? stats.pool : {};
  const processes = Array.isArray(pool.processes)
    ? pool.processes.length
    : Number(pool['max-concurrency'] ?? Number.NaN);
  if (!Number.isFinite(processes)) return undefined;
  const out: WorkerPool = { worker, processes };
  const auto = isObject(stats.autoscaler) ? stats.autoscaler : undefined;
  if (auto && Number.isFinite(Number(auto.max)) && Number.isFinite(Number(auto.min)))
    out.autoscale = { max: Number(auto.max), min: Number(auto.min) };
  return out;
}

/** Running tasks from `active` replies: id, name, worker, queue, start; never args or kwargs. */
export function runningOfActive(result: BroadcastResult): RunningWork[] {
  const out: RunningWork[] = [];
  for (const { worker, reply } of result.replies) {
    if (!Array.isArray(reply)) continue;
    for (const request of reply as Record<string, unknown>[]) {
      const work: RunningWork = { id: String(request?.id ?? ''), name: String(request?.name ?? ''), worker };
      const routingKey = (request?.delivery_info as { routing_key?: unknown } | undefined)?.routing_key;
      if (typeof routingKey === 'string') work.queue = routingKey;
      // Celery 5 converts the pool's monotonic accept time to epoch seconds (Request.on_accepted).
      const started = Number(request?.time_start);
      if (Number.isFinite(started) && started > 0) work.startedAt = Math.round(started * 1000);
      out.push(work);
    }
  }
  return out;
}

/**
 * One entry of a `registered` reply asked for `rate_limit`: `tasks.add [rate_limit=10/m]`, or the
 * bare name when the task has none (`celery/worker/control.py registered`).
 */
export function parseRegistered(entry: unknown): { task: string; rate: string | null } | undefined {
  if (typeof entry !== 'string' || entry === '') return undefined;
  const match = /^(\S+)(?: \[(.*)\])?$/.exec(entry);
  if (!match) return undefined;
  const rate = /(?:^| )rate_limit=(\S+)/.exec(match[2] ?? '')?.[1];
  return { task: match[1]!, rate: rate ?? null };
}

/** Each worker that has `task` registered and its rate, and every task name any worker has. */
export function rateLimitsOfRegistered(
  result: BroadcastResult,
  task: string,
): { workers: WorkerRateLimit[]; tasks: string[] } {
  const workers: WorkerRateLimit[] = [];
  const tasks = new Set<string>();
  for (const { worker, reply } of result.replies) {
    if (!Array.isArray(reply)) continue;
    for (const entry of reply) {
      const parsed = parseRegistered(entry);
      if (!parsed) continue;
      tasks.add(parsed.task);
      if (parsed.task === task) workers.push({ worker, rate: parsed.rate });
    }
  }
  workers.sort((a, b) => a.worker.localeCompare(b.worker));
  return { workers, tasks: [...tasks].sort() };
}

/** One system's pidbox, as each role of its control uses it: its errors are the system's own. */
interface Broadcasts {
  broadcast(
    method: string,
    args: Record<string, unknown>,
    destination?: readonly string[],
  ): Promise<BroadcastResult>;
  /** A broadcast nobody answers (`shutdown`: the worker exits inside the handler); its receivers. */
  cast(method: string, args: Record<string, unknown>, destination: readonly string[]): Promise<number>;
  listQueues: () => Promise<string[]>;
  settleMs: number;
  sleep: (ms: number) => Promise<void>;
}

export function createCeleryControl(deps: CeleryControlDeps): CeleryControl {
  const { pidbox, timeoutMs } = deps;
  const b: Broadcasts = {
    async broadcast(method, args, destination) {
      try {
        return await pidbox.broadcast(method, args, { timeoutMs, destination });
      } catch (error) {
        throw deps.unavailable(error);
      }
    },
    async cast(method, args, destination) {
      try {
        return (await pidbox.broadcast(method, args, { timeoutMs, destination, reply: false })).receivers;
      } catch (error) {
        throw deps.unavailable(error);
      }
    },
    listQueues: () => deps.listQueues(),
    settleMs: deps.settleMs ?? 5000,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
  };
  return { ...poolControl(b), ...taskControl(b), ...restartControl(b), ...rateLimitControl(b) };
}

/** The worker pools: who consumes the system's queues, and their resizing. */
function poolControl(b: Broadcasts): Pick<CeleryControl, 'pool' | 'resizePool'> {
  /** Workers consuming any of the system's queues, with their pools. */
  async function pool(): Promise<WorkerPool[]> {
    const [queues, consuming, stats] = await Promise.all([
      b.listQueues(),
      b.broadcast('active_queues', {}),
      b.broadcast('stats', {}),
    ]);
    const wanted = new Set(queues);
    const members = new Set<string>();
    for (const { worker, reply } of consuming.replies) {
      if (!Array.isArray(reply)) continue;
      if ((reply as { name?: unknown }[]).some((q) => typeof q?.name === 'string' && wanted.has(q.name)))
        members.add(worker);
    }
    return stats.replies
      .filter(({ worker }) => members.has(worker))
      .map(({ worker, reply }) => poolOfStats(worker, reply))
      .filter((p): p is WorkerPool => p !== undefined)
      .sort((a, b) => a.worker.localeCompare(b.worker));
  }

  /** One worker's change: grow, shrink, or for an autoscaling worker a new min (and max). */
  async function change(current: WorkerPool, processes: number): Promise<Omit<PoolChange, 'after'>> {
    const base = { worker: current.worker, before: current.processes };
    let method: string;
    let args: Record<string, unknown>;
    if (current.autoscale) {
      // Like an HPA: the new count becomes the floor, and the ceiling rises to meet it if needed.
      method = 'autoscale';
      args = { max: Math.max(current.autoscale.max, processes), min: processes };
    } else if (processes > current.processes) {
      method = 'pool_grow';
      args = { n: processes - current.processes };
    } else if (processes < current.processes) {
      method = 'pool_shrink';
      args = { n: current.processes - processes };
    } else {
      return { ...base, answer: 'unchanged', ok: true };
    }
    const result = await b.broadcast(method, args, [current.worker]);
    const reply = result.replies.find((r) => r.worker === current.worker);
    if (!reply) return { ...base, answer: 'no answer', ok: false };
    const { ok, text } = replyText(reply.reply);
    return { ...base, answer: text, ok };
  }

  async function resizePool(processes: number): Promise<PoolChange[]> {
    const before = await pool();
    const answers = await Promise.all(before.map((p) => change(p, processes)));
    // A worker answers before its pool has changed (processes start and stop asynchronously):
    // read `stats` until every worker that said yes shows the new size, so the outcome is true.
    const names = before.map((p) => p.worker);
    const want = (p: WorkerPool | undefined, prior: WorkerPool) =>
      p !== undefined && (prior.autoscale ? p.autoscale?.min === processes : p.processes === processes);
    const deadline = Date.now() + b.settleMs;
    let after = new Map<string, WorkerPool>();
    for (;;) {
      const stats = names.length > 0 ? await b.broadcast('stats', {}, names) : { replies: [], receivers: 0 };
      after = new Map(
        stats.replies
          .map(({ worker, reply }) => poolOfStats(worker, reply))
          .filter((p): p is WorkerPool => p !== undefined)
          .map((p) => [p.worker, p]),
      );
      const settled = before.every((prior, i) => !answers[i]!.ok || want(after.get(prior.worker), prior));
      if (settled || Date.now() >= deadline) break;
      await b.sleep(200);
    }
    return before.map((prior, i) => {
      const now = after.get(prior.worker);
      const out: PoolChange = { ...answers[i]!, after: now?.processes ?? null };
      if (prior.autoscale) out.autoscale = { before: prior.autoscale, after: now?.autoscale ?? null };
      return out;
    });
  }

  return { pool, resizePool };
}

/** The tasks running now, and their revoking. */
function taskControl(b: Broadcasts): Pick<CeleryControl, 'running' | 'revoke'> {
  async function running(): Promise<RunningWork[]> {
    return runningOfActive(await b.broadcast('active', {}));
  }

  async function revoke(
    ids: readonly string[],
    options: { terminate: boolean; signal?: 'TERM' | 'KILL' },
  ): Promise<RevokeOutcome> {
    const args: Record<string, unknown> = { task_id: [...ids], terminate: options.terminate };
    if (options.terminate) args.signal = `SIG${options.signal ?? 'TERM'}`;
    const result = await b.broadcast('revoke', args);
    const answers = result.replies
      .map(({ worker, reply }) => ({ worker, answer: replyText(reply).text }))
      .sort((a, b) => a.worker.localeCompare(b.worker));
    let stillRunning: string[] = [];
    if (options.terminate) {
      // The pool kills the process asynchronously; wait until `active` no longer lists the ids.
      const deadline = Date.now() + b.settleMs;
      for (;;) {
        const active = new Set((await running()).map((w) => w.id));
        stillRunning = ids.filter((id) => active.has(id));
        if (stillRunning.length === 0 || Date.now() >= deadline) break;
        await b.sleep(200);
      }
    }
    return {
      ids: [...ids],
      terminate: options.terminate,
      ...(options.terminate ? { signal: options.signal ?? 'TERM' } : {}),
      answers,
      stillRunning,
    };
  }

  return { running, revoke };
}

/** The workers alive, whether their pools may restart, and their restarting. */
function restartControl(
  b: Broadcasts,
): Pick<CeleryControl, 'liveWorkers' | 'poolRestartsEnabled' | 'restartWorkers'> {
  /** Who answers `ping`, with what `stats` says of them: how long they have run, their pool's pids. */
  async function liveWorkers(): Promise<LiveWorker[]> {
    const [pinged, stats] = await Promise.all([b.broadcast('ping', {}), b.broadcast('stats', {})]);
    const statsOf = new Map(stats.replies.map(({ worker, reply }) => [worker, reply]));
    return pinged.replies
      .map(({ worker }) => liveWorkerOf(worker, statsOf.get(worker)))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async function poolRestartsEnabled(workers: readonly string[]): Promise<Map<string, boolean>> {
    if (workers.length === 0) return new Map();
    // Only the changed settings (the default is off): the one key is read, nothing else is kept.
    const result = await b.broadcast('conf', { with_defaults: false }, workers);
    return new Map(
      result.replies
        .filter(({ reply }) => isObject(reply))
        .map(({ worker, reply }) => [worker, poolRestartsOn(reply as Record<string, unknown>)]),
    );
  }

  async function restartWorkers(
    targets: readonly { worker: string; method: 'pool_restart' | 'shutdown' }[],
  ): Promise<WorkerRestart[]> {
    const restarting = targets.filter((t) => t.method === 'pool_restart').map((t) => t.worker);
    const stopping = targets.filter((t) => t.method === 'shutdown').map((t) => t.worker);
    const [restarted] = await Promise.all([
      restarting.length > 0
        ? b.broadcast('pool_restart', { modules: null, reload: false, reloader: null }, restarting)
        : Promise.resolve({ replies: [], receivers: 0 }),
      stopping.length > 0 ? b.cast('shutdown', { msg: 'Got shutdown from queue-ops restart' }, stopping) : 0,
    ]);
    return targets.map((t): WorkerRestart => {
      if (t.method === 'shutdown')
        return { worker: t.worker, method: t.method, answer: 'shutdown sent', ok: true };
      const reply = restarted.replies.find((r) => r.worker === t.worker);
      if (!reply) return { worker: t.worker, method: t.method, answer: 'no answer', ok: false };
      const { ok, text } = replyText(reply.reply);
      return {
        worker: t.worker,
        method: t.method,
        answer: text,
        ok,
        ...(!ok && /pool restarts not enabled/i.test(text) ? { poolRestartsOff: true } : {}),
      };
    });
  }

  return { liveWorkers, poolRestartsEnabled, restartWorkers };
}

/** A task's rate limit on each worker, read and set. */
function rateLimitControl(b: Broadcasts): Pick<CeleryControl, 'taskRateLimits' | 'setTaskRateLimit'> {
  async function taskRateLimits(task: string, destination?: readonly string[]) {
    return rateLimitsOfRegistered(
      await b.broadcast('registered', { taskinfoitems: ['rate_limit'] }, destination),
      task,
    );
  }

  /**
   * Workers with the same new rate get one `rate_limit` together (`destination` names them);
   * a worker already at its rate is left alone. Then `registered` says what each has now.
   */
  async function setTaskRateLimit(
    task: string,
    rates: readonly WorkerRateLimit[],
  ): Promise<RateLimitAnswer[]> {
    const current = new Map((await taskRateLimits(task)).workers.map((w) => [w.worker, w.rate]));
    const answers = new Map<string, { answer: string; ok: boolean }>();
    const byRate = new Map<string | null, string[]>();
    for (const { worker, rate } of rates) {
      if (!current.has(worker)) {
        answers.set(worker, { answer: 'gone', ok: false });
        continue;
      }
      if (current.get(worker) === rate) {
        answers.set(worker, { answer: 'unchanged', ok: true });
        continue;
      }
      byRate.set(rate, [...(byRate.get(rate) ?? []), worker]);
    }
    await Promise.all(
      [...byRate].map(async ([rate, workers]) => {
        const result = await b.broadcast('rate_limit', { task_name: task, rate_limit: rate }, workers);
        for (const worker of workers) {
          const reply = result.replies.find((r) => r.worker === worker);
          if (!reply) answers.set(worker, { answer: 'no answer', ok: false });
          else {
            const { ok, text } = replyText(reply.reply);
            answers.set(worker, { answer: text, ok });
          }
        }
      }),
    );
    const names = rates.map((r) => r.worker);
    const after = new Map(
      names.length > 0 ? (await taskRateLimits(task, names)).workers.map((w) => [w.worker, w.rate]) : [],
    );
    return rates
      .map(({ worker }) => {
        const { answer, ok } = answers.get(worker) ?? { answer: 'no answer', ok: false };
        const out: RateLimitAnswer = { worker, before: current.get(worker) ?? null, answer, ok };
        if (after.has(worker)) out.after = after.get(worker) ?? null;
        return out;
      })
      .sort((a, b) => a.worker.localeCompare(b.worker));
  }

  return { taskRateLimits: (task: string) => taskRateLimits(task), setTaskRateLimit };
}

/** `worker_pool_restarts` (or its old name) from an `inspect conf` reply. */
export function poolRestartsOn(conf: Record<string, unknown>): boolean {
  const value = conf.worker_pool_restarts ?? conf.CELERYD_POOL_RESTARTS;
  return value === true || value === 'True' || value === 'true' || value === 1;
}

/** A worker that answered ping, with its uptime and pool pids when its `stats` reply has them. */
export function liveWorkerOf(worker: string, stats: unknown): LiveWorker {
  const out: LiveWorker = { name: worker };
  if (!isObject(stats)) return out;
  const uptime = Number(stats.uptime);
  if (Number.isFinite(uptime)) out.upSeconds = uptime;
  const pool = isObject(stats.pool) ? stats.pool : {};
  if (Array.isArray(pool.processes)) out.poolPids = pool.processes.map(Number).filter(Number.isFinite);
  return out;
}
