import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { toRedisForbidden } from '../../src/backends/redis-client.js';
import type { BullmqSystemConfig, CelerySystemConfig } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { messages } from '../../src/i18n/index.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { runPurge, runUndo } from '../../src/purge/engine.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { tempDir } from '../helpers/cli-run.js';
import { archivingPurge } from '../purge/engine-fixture.js';

/**
 * docs/deploy.md's read-only ACL user, created from its own line, must be enough for the whole read
 * path: a NOPERM anywhere means the documentation lies to the operator who follows it.
 */
function readmeAclLine(user: string): string {
  const readme = readFileSync(join(import.meta.dirname, '../../docs/deploy.md'), 'utf8');
  const line = readme.split('\n').find((l) => l.startsWith(`ACL SETUSER ${user} `));
  if (!line) throw new Error(`docs/deploy.md has no "ACL SETUSER ${user}" line`);
  return line;
}

const PASSWORD = 'read-only-pw';

describe("README's Redis users: read-only, and one for actions", () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let worker: CeleryWorker | undefined;
  let readUrl: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    admin = new Redis(redis.url);
    // Words as redis-cli splits them: a double-quoted selector is one argument.
    const argsOf = (user: string) =>
      [...readmeAclLine(user).matchAll(/"([^"]*)"|(\S+)/g)]
        .map((m) => m[1] ?? m[2]!)
        .slice(1)
        .map((word) => (word === '>CHANGE-ME' ? `>${PASSWORD}` : word));
    expect(await admin.call('ACL', ...argsOf('queue-ops-read'))).toBe('OK');
    expect(await admin.call('ACL', ...argsOf('queue-ops-act'))).toBe('OK');
    readUrl = `redis://queue-ops-read:${PASSWORD}@127.0.0.1:${redis.port}/0`;
  });

  afterAll(async () => {
    await worker?.stop();
    admin?.disconnect();
    await redis?.stop();
  });

  it('reads BullMQ status, dead letters and workers without a NOPERM', async () => {
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
    const queue = new Queue('dispatch-ios', { prefix: 'hs', connection });
    await queue.addBulk([1, 2, 3].map((n) => ({ name: 'push', data: { n }, opts: { attempts: 1 } })));
    const failing = new Worker(
      'dispatch-ios',
      async () => {
        throw new Error('APNs said no');
      },
      { prefix: 'hs', connection, name: 'ios-worker' },
    );
    await waitFor('three failures', async () => (await queue.getFailedCount()) === 3);
    const system = configSchema.parse({
      systems: [{ name: 'pushizo', type: 'bullmq', redis: readUrl, prefix: 'hs' }],
    }).systems[0] as BullmqSystemConfig;
    const backend = createBullmqBackend(system);
    try {
      const status = await backend.status();
      expect(status.queues.find((q) => q.name === 'dispatch-ios')?.failed).toBe(3);
      expect(status.redis.usedMemoryBytes).toBeGreaterThan(0);
      expect(status.workers.map((w) => w.name)).toContain('ios-worker');
      const dlq = await backend.dlq('dispatch-ios', 10);
      expect(dlq.jobs[0]?.error).toBe('APNs said no');
      expect((await backend.workers()).length).toBeGreaterThan(0);
      // And it really is read-only: a write is refused, an action too, and nothing changed.
      const direct = new Redis(readUrl);
      await expect(direct.set('hs:dispatch-ios:meta', 'x')).rejects.toThrow(/NOPERM/);
      direct.disconnect();
      const refused = await backend.pause!('dispatch-ios').catch((error: unknown) => error);
      expect(await queue.isPaused()).toBe(false);
      // What the operator reads: Redis refused this user, nothing changed, which user to use.
      const forbidden = toRedisForbidden('pushizo', refused);
      expect(forbidden?.code).toBe('RedisForbidden');
      const line = messages('en').errors.describe(forbidden!);
      expect(line).toContain('Redis for `pushizo` refused: its user may not change the queues');
      expect(line).toContain('Least-privilege Redis users');
      expect(line).not.toContain(PASSWORD);
      // The actions user from README runs what the read user may not.
      const actor = createBullmqBackend({
        ...system,
        redis: `redis://queue-ops-act:${PASSWORD}@127.0.0.1:${redis.port}/0`,
      });
      try {
        expect(await actor.pause!('dispatch-ios')).toMatchObject({ isPaused: true });
        expect(await queue.isPaused()).toBe(true);
        expect(await actor.retry!('dispatch-ios', { all: true, limit: 10 })).toMatchObject({ retried: 3 });
        expect(await actor.resume!('dispatch-ios')).toMatchObject({ isPaused: false });
      } finally {
        await actor.close();
      }
    } finally {
      await backend.close();
      await failing.close();
      await queue.close();
    }
  });

  it('purges and undoes as the actions user narrowed to the queues prefix (~hs:*): the undo marker is under it', async () => {
    // README's actions line with its keys limited to one BullMQ prefix, as a shared Redis would.
    const narrowed = readmeAclLine('queue-ops-act')
      .replace('queue-ops-act', 'queue-ops-act-hs')
      .replace('>CHANGE-ME', `>${PASSWORD}`)
      .replace(/ ~\* /, ' ~hs:* ');
    expect(narrowed).toContain(' ~hs:* ');
    expect(
      await admin.call(
        'ACL',
        ...[...narrowed.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!).slice(1),
      ),
    ).toBe('OK');
    const seeder = new Redis(redis.url);
    await seedRawBullmqJobs(seeder, { prefix: 'hs', queue: 'acl-purge', count: 500 });
    const before = await seeder.lrange('hs:acl-purge:wait', 0, -1);
    const tmp = tempDir('acl-undo');
    const store = createSqliteStore(join(tmp.dir, 'q.db'));
    await store.migrate();
    const actor = createBullmqBackend(
      configSchema.parse({
        systems: [
          {
            name: 'pushizo',
            type: 'bullmq',
            prefix: 'hs',
            redis: `redis://queue-ops-act-hs:${PASSWORD}@127.0.0.1:${redis.port}/0`,
          },
        ],
      }).systems[0] as BullmqSystemConfig,
    );
    try {
      const record = await archivingPurge(store, tmp.dir, {
        id: 'r-aclundo1',
        system: 'pushizo',
        queue: 'acl-purge',
        total: 500,
        owner: 'me',
      });
      const purger = await actor.purger!('acl-purge');
      await admin.call('ACL', 'LOG', 'RESET');
      const { record: done } = await runPurge(record, { store, purger, owner: 'me' });
      // The hashes were read through the raw pipe, opened as that user, and nothing was refused.
      const pipe = String(await admin.client('LIST'))
        .split('\n')
        .find((line) => line.includes(' name=queue-ops:pushizo:purge:read '));
      expect(pipe).toContain(' user=queue-ops-act-hs ');
      expect(pipe).toContain(' cmd=hgetall ');
      expect(await admin.call('ACL', 'LOG')).toEqual([]);
      expect(await seeder.llen('hs:acl-purge:wait')).toBe(0);
      expect(await runUndo(done, { purger })).toEqual({ restored: 500, existing: [], alreadyThere: 0 });
      await purger.clearUndoProgress(done.id);
      await purger.close();
      expect(await seeder.lrange('hs:acl-purge:wait', 0, -1)).toEqual(before);
    } finally {
      await actor.close();
      await store.close();
      seeder.disconnect();
      tmp.remove();
    }
  });

  it('reads Celery queues, failures and inspects a real worker without a NOPERM', async () => {
    const target = { brokerUrl: `${redis.url}/0` };
    worker = await startCeleryWorker({ ...target, name: 'qo-acl', queues: ['alarm_processing'] });
    await publishCelery(target, [
      { task: 'tasks.boom', args: ['no device'], queue: 'alarm_processing', wait: true },
    ]);
    const system = configSchema.parse({
      systems: [{ name: 'zeus', type: 'celery', redis: readUrl, inspectTimeoutMs: 1000 }],
    }).systems[0] as CelerySystemConfig;
    const backend = createCeleryBackend(system);
    try {
      const status = await backend.status();
      expect(status.warnings.filter((w) => w.code === 'WorkerInspectFailed')).toEqual([]);
      expect(status.workers.map((w) => w.name)).toContain(worker.name);
      expect(status.queues.find((q) => q.name === 'alarm_processing')?.failed).toBe(1);
      const dlq = await backend.dlq('alarm_processing', 10);
      expect(dlq.jobs[0]?.error).toMatch(/^ValueError: no device/);
      const workers = await backend.workers();
      expect(workers.map((w) => w.name)).toContain(worker.name);
    } finally {
      await backend.close();
    }
  }, 60_000);
});
