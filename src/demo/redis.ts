import { Redis } from 'ioredis';
import { redactUrl } from '../backends/redis-client.js';
import { messages } from '../i18n/index.js';
import { startPrivateRedis } from '../lib/redis-server.js';

/** Marks a database as taken by one demo run; the only key the demo writes before seeding. */
export const DEMO_CLAIM_KEY = 'queue-ops-demo:owner';

/** The demo's key families, so that cleanup on a shared Redis removes only what the demo wrote. */
export const DEMO_KEY_PATTERNS = [
  'hs:*',
  'celery*',
  '_kombu.*',
  'unacked*',
  '*.reply.celery.pidbox*',
  // The record a demo pause of a Celery queue leaves in the broker.
  'queue-ops:*',
  DEMO_CLAIM_KEY,
];

/** Where the demo's data lives, and how to give it back. */
export interface DemoRedis {
  /** A URL that selects the demo's own database. */
  url: string;
  /** Safe to print: no password. */
  displayUrl: string;
  kind: 'private' | 'shared';
  db: number;
  /** Why a REDIS_URL that was set is not used (a private server runs instead). */
  sharedProblem?: string;
  release(): Promise<void>;
}

/** Expected failure of `resolveDemoRedis`; its message is one line for the user. */
export class DemoRedisError extends Error {}

/** The same URL with its path set to `/<db>`. */
export function withDb(url: string, db: number): string {
  const parsed = new URL(url);
  parsed.pathname = `/${db}`;
  return parsed.toString();
}

async function ping(url: string): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1500,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let socketError: Error | undefined;
  client.on('error', (error: Error) => {
    socketError = error;
  });
  try {
    await client.connect();
    await client.ping();
    return client;
  } catch (error) {
    client.disconnect();
    // ioredis rejects with "Connection is closed."; the socket's own error says why
    throw socketError ?? error;
  }
}

/**
 * Takes an empty database of a Redis someone else runs: the highest-numbered empty one (or the
 * one asked for), claimed with SET NX so that two demos on one server never share a database.
 */
async function claimDatabase(url: string, wanted: number | undefined): Promise<number> {
  const candidates = wanted === undefined ? [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1] : [wanted];
  for (const db of candidates) {
    const client = new Redis(withDb(url, db), {
      lazyConnect: true,
      connectTimeout: 1500,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      if ((await client.dbsize()) !== 0) continue;
      const claimed = await client.set(DEMO_CLAIM_KEY, String(process.pid), 'NX');
      if (claimed === 'OK') return db;
    } catch {
      // a server with fewer databases, or one that refuses SELECT: try the next candidate
    } finally {
      client.disconnect();
    }
  }
  const t = messages().demo;
  throw new DemoRedisError(wanted === undefined ? t.noFreeDb : t.dbNotEmpty(wanted));
}

/** Deletes the demo's key families with SCAN + UNLINK in batches; nothing else is touched. */
export async function deleteDemoKeys(url: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  let deleted = 0;
  try {
    for (const pattern of DEMO_KEY_PATTERNS) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) deleted += await client.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    client.disconnect();
  }
  return deleted;
}

/**
 * `REDIS_URL` when it is set and answers PING (in an empty database of its own), otherwise a
 * private redis-server. Throws `DemoRedisError` with a one-line reason when neither works.
 */
export async function resolveDemoRedis(
  env: Record<string, string | undefined>,
  options: { db?: number; dir?: string } = {},
): Promise<DemoRedis> {
  const shared = env.REDIS_URL?.trim();
  let sharedProblem: string | undefined;
  if (shared) {
    try {
      (await ping(shared)).disconnect();
      const db = await claimDatabase(shared, options.db);
      const url = withDb(shared, db);
      return {
        url,
        displayUrl: redactUrl(shared),
        kind: 'shared',
        db,
        release: async () => {
          await deleteDemoKeys(url);
        },
      };
    } catch (error) {
      const reason = error instanceof DemoRedisError ? error.message : firstLine(error);
      sharedProblem = messages().demo.redisUrlUnusable(redactUrl(shared), reason);
    }
  }
  try {
    const server = await startPrivateRedis(options.dir ? { dir: options.dir } : {});
    return {
      url: withDb(server.url, 0),
      displayUrl: server.url,
      kind: 'private',
      db: 0,
      sharedProblem,
      release: () => server.stop(),
    };
  } catch (error) {
    // the caller's message already says how to install redis-server
    const reason = firstLine(error).replace(/; install Debian's redis-server package or set REDIS_URL$/, '');
    throw new DemoRedisError(sharedProblem ? `${sharedProblem}; and ${reason}` : reason);
  }
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error)
    .split('\n')[0]!
    .replace(/(rediss?:\/\/)[^@\s/]*@/gi, '$1***@');
}
