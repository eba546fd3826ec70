import type { QueueBackend } from '../backends/queue-backend.js';
import type { CeleryPoolGroupConfig } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { GroupState, RestartPlan, RestartTarget, ScaleReport, Scaler } from './types.js';

export interface CeleryPoolScalerDeps {
  system: string;
  group: string;
  spec: CeleryPoolGroupConfig;
  backend: Pick<QueueBackend, 'pool' | 'resizePool' | 'poolRestartsEnabled' | 'restartWorkers'>;
}

/**
 * The pool of every Celery worker consuming the system's queues, resized over pidbox
 * (`pool_grow`/`pool_shrink`, or `autoscale` for workers started with `--autoscale`). Every
 * worker gets the same count, as `celery control pool_grow` without `-d` would.
 */
export function createCeleryPoolScaler(deps: CeleryPoolScalerDeps): Scaler {
  const { backend, spec, system, group } = deps;

  function abilities() {
    const { pool, resizePool } = backend;
    if (!pool || !resizePool)
      throw new OpsError(ErrorCode.NotSupported, { system, type: 'celery', what: 'resizePool' });
    return { pool: pool.bind(backend), resizePool: resizePool.bind(backend) };
  }

  async function state(): Promise<GroupState> {
    const pools = await abilities().pool();
    return {
      system,
      group,
      type: 'celery-pool',
      min: spec.min,
      max: spec.max,
      targets: pools.map((p) => ({
        name: p.worker,
        desired: p.processes,
        current: p.processes,
        ...(p.autoscale ? { autoscale: p.autoscale } : {}),
      })),
    };
  }

  async function scale(replicas: number): Promise<ScaleReport> {
    const changes = await abilities().resizePool(replicas);
    if (changes.length === 0)
      throw new OpsError(ErrorCode.ScaleFailed, {
        target: `${system}/${group}`,
        reason: messages().scale.failures.noWorkerAnswered,
      });
    return {
      system,
      group,
      type: 'celery-pool',
      replicas,
      targets: changes.map((c) => ({
        name: c.worker,
        before: c.before,
        after: c.after,
        answer: c.answer,
        ok: c.ok,
        ...(c.autoscale ? { autoscale: c.autoscale } : {}),
      })),
    };
  }

  /**
   * Every worker of the pool, each with the method the group asks for; with `pool_restart`, a
   * worker whose `inspect conf` shows pool restarts off is shut down instead (it would only answer
   * "not enabled"), and the preview says so. A worker that did not answer `conf` is sent
   * `pool_restart`, and its answer tells.
   */
  async function planRestart(): Promise<RestartPlan> {
    const pools = await abilities().pool();
    const workers = pools.map((p) => p.worker);
    const { poolRestartsEnabled } = backend;
    const enabled =
      spec.restart === 'pool_restart' && poolRestartsEnabled
        ? await poolRestartsEnabled.call(backend, workers)
        : new Map<string, boolean>();
    const targets = workers.map((worker): RestartTarget => {
      if (spec.restart === 'shutdown') return { name: worker, method: 'shutdown' };
      if (enabled.get(worker) === false)
        return { name: worker, method: 'shutdown', reason: 'poolRestartsOff' };
      return { name: worker, method: 'pool_restart' };
    });
    return {
      system,
      group,
      type: 'celery-pool',
      targets,
      ...(spec.workerNames ? { workerNames: spec.workerNames } : {}),
      timeoutSeconds: spec.restartTimeoutSeconds,
    };
  }

  async function restart(plan: RestartPlan) {
    const { restartWorkers } = backend;
    if (!restartWorkers)
      throw new OpsError(ErrorCode.NotSupported, { system, type: 'celery', what: 'restart' });
    const sent = await restartWorkers.call(
      backend,
      plan.targets.map((t) => ({
        worker: t.name,
        method: t.method === 'shutdown' ? ('shutdown' as const) : ('pool_restart' as const),
      })),
    );
    return {
      targets: plan.targets.map((t, i): RestartTarget => {
        const answer = sent[i]!;
        return {
          ...t,
          answer: answer.answer,
          ok: answer.ok,
          ...(answer.poolRestartsOff ? { poolRestartsOff: true } : {}),
        };
      }),
    };
  }

  return { type: 'celery-pool', state, scale, planRestart, restart };
}
