import type { QueueBackend } from '../backends/queue-backend.js';
import type { CeleryPoolGroupConfig } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { GroupState, ScaleReport, Scaler } from './types.js';

export interface CeleryPoolScalerDeps {
  system: string;
  group: string;
  spec: CeleryPoolGroupConfig;
  backend: Pick<QueueBackend, 'pool' | 'resizePool'>;
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

  return { type: 'celery-pool', state, scale };
}
