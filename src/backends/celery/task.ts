import type { JobFound, JobLookup, JobView, StoredResult } from '../queue-backend.js';

/**
 * Where a Celery task is, as `job <system> <task-id>` shows it: Celery's own view of a job, what a
 * Celery backend's lookup holds. Never its arguments.
 */
export interface CeleryTaskView extends JobView {
  /**
   * `queued`, `unacked` (delivered, not yet acknowledged: a worker holds it, or an ETA task),
   * `active` / `reserved` / `scheduled` (a worker's own word), else the result backend's status
   * (`SUCCESS`, `FAILURE`, `RETRY`, `REVOKED`, `STARTED`).
   */
  state: string;
  name: string | null;
  /** The list it waits in, its priority and how many messages workers take before it. */
  where: { queue: string; list: string; priority: number; position: number } | null;
  /** The worker that reported it (`inspect query_task`). */
  worker: string | null;
  /** Its record in the result backend, when there is one. */
  result: StoredResult | null;
}

/** A lookup a Celery backend answered: its job is Celery's view of the task. */
export function isCeleryTask(lookup: JobLookup): lookup is JobFound<CeleryTaskView> {
  return lookup.found && lookup.kind === 'celery';
}

const TRACEBACK_LINES = 6;

/** The stored result, reduced to what may be shown: never `result` of a success, args or kwargs. */
export function parseTaskResult(raw: string | null): (StoredResult & { name: string | null }) | null {
  if (raw === null) return null;
  let meta: Record<string, unknown>;
  try {
    meta = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
  const status = String(meta.status ?? 'UNKNOWN');
  const failure =
    (status === 'FAILURE' || status === 'RETRY') && meta.result && typeof meta.result === 'object'
      ? (meta.result as { exc_type?: unknown; exc_message?: unknown })
      : undefined;
  const message = Array.isArray(failure?.exc_message)
    ? failure.exc_message.map(String).join(', ')
    : String(failure?.exc_message ?? '');
  const traceback =
    typeof meta.traceback === 'string' ? meta.traceback.split('\n').filter((l) => l.trim() !== '') : [];
  // result_extended stores `queue` (Celery 5.x) and, in some versions, `delivery_info`.
  const delivery = meta.delivery_info as { routing_key?: unknown } | undefined;
  const queue = typeof meta.queue === 'string' ? meta.queue : delivery?.routing_key;
  return {
    status,
    dateDone: typeof meta.date_done === 'string' ? meta.date_done : null,
    retries: typeof meta.retries === 'number' ? meta.retries : null,
    // The end of a traceback says what went wrong: its last lines, as `celery` logs read.
    traceback: traceback.slice(-TRACEBACK_LINES),
    error: failure
      ? `${String(failure.exc_type ?? 'Error')}${message ? `: ${message.split('\n', 1)[0]}` : ''}`
      : null,
    queue: typeof queue === 'string' ? queue : null,
    name: typeof meta.name === 'string' ? meta.name : null,
  };
}
