import type { QueueBackend, StatusOptions, SystemStatus } from './queue-backend.js';

/**
 * The same backend, except that concurrent `status()` calls asking for the same queues share one
 * Redis read in flight: ten scrapes and ten `/queue status` typed during an incident cost one
 * pipelined round trip, not twenty. Nothing is cached past the read itself; `metrics` adds its own
 * short cache on top.
 */
export function coalesceStatus<B extends QueueBackend>(backend: B): B {
  const inFlight = new Map<string, Promise<SystemStatus>>();
  const wrapper = Object.create(backend) as B;
  wrapper.status = (queues?: string[], options?: StatusOptions) => {
    // Asked with worker stats (the monitor), throughput or due buckets, a read is not the same as one without them.
    const tp = options?.throughput;
    const key = `${queues ? JSON.stringify([...queues].sort()) : '*'}|${options?.failedSince ?? ''}|${options?.workerStats ? 'stats' : ''}|${
      tp ? `${tp.spanMs}:${tp.sample}:${tp.raw === true}` : ''
    }|${options?.delayedDue === true}`;
    const running = inFlight.get(key);
    if (running) return running;
    const read = backend.status(queues, options).finally(() => inFlight.delete(key));
    inFlight.set(key, read);
    return read;
  };
  return wrapper;
}
