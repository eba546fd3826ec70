import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execWithScripts, luaScript, runScript } from '../../src/backends/lua.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { redisMonitor } from '../helpers/redis-monitor.js';

const BUMP = luaScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);

describe('the one way queue-ops runs Lua: EVALSHA, and by body only what the server had forgotten', () => {
  // SCRIPT FLUSH is server-wide, so these run on a Redis no other test uses.
  let server: PrivateRedis;
  let redis: Redis;
  let monitor: string[];

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  /** The commands the server received while `fn` ran, by name (MONITOR on its own connection). */
  async function commandsDuring(fn: () => Promise<unknown>): Promise<string[]> {
    const { monitor: watcher, close: closeMonitor } = await redisMonitor(server.url);
    monitor = [];
    watcher.on('monitor', (_time: string, args: string[]) => monitor.push(String(args[0]).toUpperCase()));
    try {
      await fn();
      await redis.ping();
      await new Promise((r) => setTimeout(r, 50));
      return monitor.filter((c) => c !== 'PING');
    } finally {
      closeMonitor();
    }
  }

  it('after SCRIPT FLUSH a pipeline of commands and scripts runs each exactly once: only the scripts go again, by body', async () => {
    await redis.del('plain', 'scripted');
    await redis.script('FLUSH');
    const seen = await commandsDuring(async () => {
      const replies = await execWithScripts(redis, [
        { command: (p) => p.incr('plain') },
        { script: BUMP, keys: ['scripted'], args: [5] },
        { command: (p) => p.incr('plain') },
      ]);
      expect(replies.map(([error, value]) => [error, value])).toEqual([
        [null, 1],
        [null, 5],
        [null, 2],
      ]);
    });
    expect(seen.filter((c) => c !== 'INCRBY')).toEqual(['INCR', 'EVALSHA', 'INCR', 'EVAL']);
    expect(await redis.mget('plain', 'scripted')).toEqual(['2', '5']);

    // Cached now: one round trip, EVALSHA only.
    const again = await commandsDuring(() =>
      execWithScripts(redis, [{ script: BUMP, keys: ['scripted'], args: [1] }]),
    );
    expect(again.filter((c) => c !== 'INCRBY')).toEqual(['EVALSHA']);
    expect(await redis.get('scripted')).toBe('6');
  });

  it('runScript does the same for one call, and refuses a script with a shebang (it would not run at OOM)', async () => {
    await redis.script('FLUSH');
    expect(await runScript(redis, BUMP, ['single'], [3])).toBe(3);
    expect(await runScript(redis, BUMP, ['single'], [3])).toBe(6);
    expect(() => luaScript('#!lua\nreturn 1')).toThrow('must not use a shebang');
  });
});
