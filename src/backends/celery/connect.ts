import type { Redis } from 'ioredis';
import { ensureConnected } from '../redis-client.js';

/**
 * `ensureConnected` with a hard deadline. A server that accepts the TCP connection but never
 * answers (a paused or overloaded Redis) passes ioredis' connect timeout and then waits on the
 * ready check indefinitely; this bounds it. When the connect fails, the socket's own error
 * (ECONNREFUSED, ETIMEDOUT…) is thrown rather than ioredis' generic "Connection is closed".
 */
export async function connectWithin(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  let lastError: unknown;
  const onError = (error: unknown) => {
    lastError = error;
  };
  client.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ensureConnected(client),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('connect timeout')), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw lastError ?? error;
  } finally {
    clearTimeout(timer);
    client.off('error', onError);
  }
}
