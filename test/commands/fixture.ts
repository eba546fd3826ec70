import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

export function randomName(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/**
 * Every verb of the command line and the bot, in the order `help --json` lists them: written out,
 * not read from the registry, so that a test comparing with it fails when one goes missing.
 */
export const EVERY_VERB = [
  'status',
  'dlq',
  'workers',
  'redis',
  'results',
  'job',
  'pause',
  'resume',
  'retry',
  'purge',
  'undo',
  'pending',
  'approve',
  'deny',
  'audit',
  'alerts',
  'ack',
  'snooze',
  'page',
  'silence',
  'silences',
  'unsilence',
  'scale',
  'restart',
  'stuck',
  'revoke',
  'fail',
  'expire-results',
  'rate-limit',
  'concurrency',
  'timeline',
  'trend',
  'why',
  'help',
] as const;

/** ioredis options for BullMQ's own clients (Workers need maxRetriesPerRequest null). */
export function connectionFor(url: string) {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port), maxRetriesPerRequest: null };
}

/** Polls until `check` holds; fails after 10 s. */
export async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * BullMQ queues under a random prefix on the private test Redis (DB 0, isolated by prefix and
 * removed by SCAN afterwards; never flushed), and config files in a temp directory.
 */
export class BullmqScene {
  readonly prefix = randomName('qo');
  readonly dir = mkdtempSync(join(tmpdir(), 'queue-ops-cmd-'));
  private readonly closers: (() => Promise<unknown>)[] = [];
  private readonly connection;

  constructor(readonly redisUrl: string) {
    this.connection = connectionFor(redisUrl);
  }

  queue(name: string): Queue {
    const queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
    this.closers.push(() => queue.close());
    return queue;
  }

  /**
   * One queue in every state, made by real BullMQ: 2 completed, 3 failed (two alike), 1 active
   * (held by a live worker), 3 waiting, 2 delayed, 2 prioritized.
   */
  async everyState(name: string): Promise<Queue> {
    const queue = this.queue(name);
    const work = new Worker(
      name,
      async (job) => {
        if (job.data.mode === 'fail') throw new Error(job.data.reason);
        return 'done';
      },
      { connection: this.connection, prefix: this.prefix, concurrency: 10 },
    );
    await queue.addBulk([
      { name: 'send-push', data: { mode: 'ok' } },
      { name: 'send-push', data: { mode: 'ok' } },
      { name: 'send-push', data: { mode: 'fail', reason: 'ProviderError: APNs timed out' } },
      { name: 'send-push', data: { mode: 'fail', reason: 'ProviderError: APNs timed out' } },
      { name: 'render', data: { mode: 'fail', reason: 'RenderError: template <b>missing</b>' } },
    ]);
    await waitFor('completed and failed', async () => {
      const c = await queue.getJobCounts('completed', 'failed');
      return c.completed === 2 && c.failed === 3;
    });
    await work.close();

    // A worker of concurrency 1 busy with one job fetches nothing else: that job stays active.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holder = new Worker(
      name,
      async () => {
        await gate;
      },
      { connection: this.connection, prefix: this.prefix, concurrency: 1 },
    );
    this.closers.push(async () => {
      release();
      await holder.close();
    });
    await queue.add('send-push', { mode: 'hold' });
    await waitFor('one active job', async () => (await queue.getActiveCount()) === 1);
    await queue.addBulk([
      { name: 'send-push', data: { mode: 'ok' } },
      { name: 'send-push', data: { mode: 'ok' } },
      { name: 'send-push', data: { mode: 'ok' } },
      { name: 'later', data: {}, opts: { delay: 3_600_000 } },
      { name: 'later', data: {}, opts: { delay: 3_600_000 } },
      { name: 'vip', data: {}, opts: { priority: 3 } },
      { name: 'vip', data: {}, opts: { priority: 5 } },
    ]);
    return queue;
  }

  /** A paused queue holding `waiting` jobs. */
  async paused(name: string, waiting: number): Promise<Queue> {
    const queue = this.queue(name);
    await queue.pause();
    await queue.addBulk(Array.from({ length: waiting }, () => ({ name: 'event', data: {} })));
    return queue;
  }

  /**
   * Writes a config file; `yaml` may use ${VAR}. Without a `store:` line the bot's store goes
   * into this scene's temp dir, never `./data` of the checkout.
   */
  writeConfig(yaml: string, file = 'queue-ops.yml'): string {
    const path = join(this.dir, file);
    const store = /^store:/m.test(yaml) ? '' : `store: sqlite:${join(this.dir, 'queue-ops.db')}\n`;
    writeFileSync(path, store + yaml);
    return path;
  }

  async cleanup(): Promise<void> {
    while (this.closers.length > 0) await this.closers.pop()!().catch(() => {});
    const redis = new Redis(this.redisUrl, { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The exact key set of an object, sorted, for shape assertions. */
export function keysOf(value: unknown): string[] {
  return Object.keys(value as object).sort();
}
