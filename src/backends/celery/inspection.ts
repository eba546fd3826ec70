import type { ActiveTask, WorkerInfo } from '../queue-backend.js';
import type { BroadcastResult } from './pidbox.js';

/** What the workers said in one round of inspection, reduced to what may be shown. */
export interface Inspection {
  workers: Map<string, WorkerInfo>;
  /** Running tasks per queue (the routing key of their delivery). */
  activeByQueue: Map<string, number>;
  /** Queues consumed by at least one worker; undefined when no worker answered `active_queues`. */
  consumed: Set<string> | undefined;
}

/** Reserved tasks kept per worker for `workers` (the count is whole). */
const RESERVED_KEPT = 10;

/** The workers' replies to one round of inspection, reduced to what may be shown. */
export function readInspection(results: Map<string, BroadcastResult>): Inspection {
  const workers = new Map<string, WorkerInfo>();
  const worker = (name: string) => {
    let info = workers.get(name);
    if (!info) {
      info = { name };
      workers.set(name, info);
    }
    return info;
  };
  const activeByQueue = new Map<string, number>();
  for (const { worker: name, reply } of results.get('active')?.replies ?? []) {
    if (!Array.isArray(reply)) continue;
    const tasks: ActiveTask[] = [];
    for (const request of reply as Record<string, unknown>[]) {
      // Only these fields: `active` replies also carry the task's args and kwargs.
      const task: ActiveTask = { id: String(request?.id ?? ''), name: String(request?.name ?? '') };
      const started = Number(request?.time_start);
      if (Number.isFinite(started) && started > 0) task.startedAt = Math.round(started * 1000);
      tasks.push(task);
      const routingKey = (request?.delivery_info as { routing_key?: unknown } | undefined)?.routing_key;
      if (typeof routingKey === 'string')
        activeByQueue.set(routingKey, (activeByQueue.get(routingKey) ?? 0) + 1);
    }
    const info = worker(name);
    info.active = tasks.length;
    info.activeTasks = tasks;
  }
  for (const { worker: name, reply } of results.get('reserved')?.replies ?? []) {
    if (!Array.isArray(reply)) continue;
    // Ids and names only: a reserved request carries the task's args and kwargs too.
    const tasks = (reply as Record<string, unknown>[]).map((request) => ({
      id: String(request?.id ?? ''),
      name: String(request?.name ?? ''),
    }));
    const info = worker(name);
    info.reserved = tasks.length;
    info.reservedTasks = tasks.slice(0, RESERVED_KEPT);
  }
  let consumed: Set<string> | undefined;
  for (const { worker: name, reply } of results.get('active_queues')?.replies ?? []) {
    if (!Array.isArray(reply)) continue;
    consumed ??= new Set();
    const queues = (reply as { name?: unknown }[])
      .map((q) => q?.name)
      .filter((q): q is string => typeof q === 'string')
      .sort();
    for (const queue of queues) consumed.add(queue);
    worker(name).queues = queues;
  }
  for (const { worker: name, reply } of results.get('stats')?.replies ?? []) {
    if (!reply || typeof reply !== 'object' || Array.isArray(reply)) continue;
    worker(name).details = statsDetails(reply as Record<string, unknown>);
  }
  for (const { worker: name } of results.get('ping')?.replies ?? []) worker(name);
  return { workers, activeByQueue, consumed };
}

/** The safe, one-line facts of a `stats` reply; its `broker` part is never read. */
function statsDetails(stats: Record<string, unknown>): Record<string, string | number> {
  const details: Record<string, string | number> = {};
  const pool = stats.pool as Record<string, unknown> | undefined;
  const concurrency = Number(pool?.['max-concurrency']);
  if (Number.isFinite(concurrency)) details.concurrency = concurrency;
  if (Array.isArray(pool?.processes)) details.processes = pool.processes.length;
  const pid = Number(stats.pid);
  if (Number.isFinite(pid)) details.pid = pid;
  const uptime = Number(stats.uptime);
  if (Number.isFinite(uptime)) details.uptimeSeconds = uptime;
  const prefetch = Number(stats.prefetch_count);
  if (Number.isFinite(prefetch)) details.prefetch = prefetch;
  return details;
}
