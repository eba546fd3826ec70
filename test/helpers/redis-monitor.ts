import { Redis } from 'ioredis';

/**
 * MONITOR on a connection of its own, and the client that asked for it. ioredis' `monitor()`
 * answers with a second connection: the client it was called on stays connected, and once the
 * test's redis-server stops it reconnects for good and prints "[ioredis] Unhandled error event:
 * ECONNREFUSED" (the three such lines of a clean `npm test` were `new Redis(url).monitor()`).
 * `close()` ends both.
 */
export async function redisMonitor(url: string): Promise<{ monitor: Redis; close(): void }> {
  const asker = new Redis(url);
  const monitor = await asker.monitor();
  return {
    monitor,
    close() {
      monitor.disconnect();
      asker.disconnect();
    },
  };
}

/** Connections to the Redis at `url` other than the one this asks on (CLIENT LIST). */
export async function otherConnections(url: string): Promise<number> {
  const checker = new Redis(url);
  try {
    const list = String(await checker.client('LIST'))
      .trim()
      .split('\n');
    return list.length - 1;
  } finally {
    checker.disconnect();
  }
}
