import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type BullmqBackend,
  createBullmqBackend,
  DISCOVERY_TTL_MS,
} from '../../src/backends/bullmq/index.js';
import { STATUS_BATCH_QUEUES } from '../../src/backends/bullmq/status-script.js';
import { OpsError } from '../../src/errors.js';
import { startPrivateRedis } from '../../src/lib/redis-server.js';
import {
  connectionFor,
  deletePrefix,
  monitorClient,
  ProviderError,
  randomName,
  systemFor,
  waitFor,
} from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();
const connection = connectionFor(redisUrl);

describe('BullMQ backend reads', () => {
  let prefix: string;
  let clock: number;
  let backend: BullmqBackend;
  const closers: (() => Promise<void>)[] = [];

  beforeEach(() => {
    prefix = randomName();
    clock = Date.now();
    backend = createBullmqBackend(systemFor(redisUrl, prefix), { now: () => clock });
  });

  afterEach(async () => {
    await backend.close();
    while (closers.length > 0) await closers.pop()!();
    await deletePrefix(redisUrl, prefix);
  });

  function open(name: string) {
    const queue = new Queue(name, { connection, prefix });
    closers.push(() => queue.close());
    return queue;
  }

  /** Fails `reasons.length` jobs through a real Worker, oldest first. */
  async function fail(queue: Queue, reasons: string[], jobName = 'send-push') {
    await queue.addBulk(
      reasons.map((reason) => ({ name: jobName, data: { secret: 'job-payload', reason } })),
    );
    const before = await queue.getFailedCount();
    const worker = new Worker(
      queue.name,
      async (job) => {
        throw new ProviderError(job.data.reason);
      },
      { connection, prefix, concurrency: 50 },
    );
    await waitFor('failures', async () => (await queue.getFailedCount()) === before + reasons.length);
    await worker.close();
  }

  it('discovers queues from their meta keys, sorted, ignoring other prefixes that share the same start', async () => {
    await open('webhooks').waitUntilReady();
    await open('audience').add('x', {});
    await open('dispatch-ios').add('x', {});
    // Same first segment, longer prefix: its queues are not ours.
    const nested = new Queue('other', { connection, prefix: `${prefix}:nested` });
    closers.push(() => nested.close());
    await nested.add('x', {});
    await waitFor('meta of every queue', async () => (await backend.listQueues()).length >= 3);
    expect(await backend.listQueues()).toEqual(['audience', 'dispatch-ios', 'webhooks']);
  });

  it('keeps discovered queues for 5 minutes, then refreshes them in the background of a read', async () => {
    await open('first').add('x', {});
    expect(await backend.listQueues()).toEqual(['first']);
    await open('second').add('x', {});
    expect(await backend.listQueues()).toEqual(['first']);
    expect((await backend.status()).queues.map((q) => q.name)).toEqual(['first']);
    clock += DISCOVERY_TTL_MS + 1;
    // The read after the TTL answers from what it knows and starts the SCAN; the next one sees it.
    expect((await backend.status()).queues.map((q) => q.name)).toEqual(['first']);
    await waitFor('the background discovery', async () => (await backend.listQueues()).length === 2);
    expect(await backend.listQueues()).toEqual(['first', 'second']);
  });

  it('finds a queue created since the last scan when it is asked for by name', async () => {
    await open('first').add('x', {});
    expect(await backend.listQueues()).toEqual(['first']);
    await open('second').add('x', {});
    // Right after a scan a miss is trusted, so a typo typed in a loop costs no SCAN.
    await expect(backend.status(['second'])).rejects.toMatchObject({ code: 'UnknownQueue' });
    clock += 5_000;
    const status = await backend.status(['second']);
    expect(status.queues).toMatchObject([{ name: 'second', waiting: 1 }]);
  });

  it('refuses an unknown queue with the valid ones and a did-you-mean', async () => {
    await open('dispatch-ios').add('x', {});
    await open('webhooks').add('x', {});
    const error = await backend.dlq('dispach-ios', 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsError);
    expect((error as OpsError).code).toBe('UnknownQueue');
    expect((error as OpsError).params).toMatchObject({
      system: backend.name,
      queue: 'dispach-ios',
      valid: ['dispatch-ios', 'webhooks'],
      suggestion: 'dispatch-ios',
    });
    await expect(backend.status(['nope'])).rejects.toMatchObject({ code: 'UnknownQueue' });
    await expect(backend.pause('nope')).rejects.toMatchObject({ code: 'UnknownQueue' });
  });

  it('uses the configured queues instead of discovering them', async () => {
    await open('discovered').add('x', {});
    const configured = createBullmqBackend(systemFor(redisUrl, prefix, ['scheduler', 'events']));
    try {
      expect(await configured.listQueues()).toEqual(['events', 'scheduler']);
      const status = await configured.status();
      expect(status.queues.map((q) => q.name)).toEqual(['events', 'scheduler']);
      expect(status.queues[0]).toMatchObject({ waiting: 0, failed: 0, oldestWaitingSeconds: null });
      await expect(configured.status(['discovered'])).rejects.toMatchObject({ code: 'UnknownQueue' });
    } finally {
      await configured.close();
    }
  });

  it('samples dead letters with the first line of the reason and the attempts made, newest first', async () => {
    const queue = open('dispatch-ios');
    await queue.add('send-push', { secret: 'payload' }, { attempts: 3, backoff: 0 });
    const worker = new Worker(
      'dispatch-ios',
      async () => {
        throw new ProviderError('ProviderError: APNs 410 Unregistered\ndevice token abc is gone');
      },
      { connection, prefix },
    );
    await waitFor('the job to fail for good', async () => (await queue.getFailedCount()) === 1);
    await worker.close();
    await fail(queue, ['TimeoutError: FCM did not answer in 10000 ms'], 'send-fcm');

    const sample = await backend.dlq('dispatch-ios', 10);
    expect(sample.total).toBe(2);
    expect(sample.jobs.map((j) => [j.name, j.error, j.attempts])).toEqual([
      ['send-fcm', 'TimeoutError: FCM did not answer in 10000 ms', 1],
      ['send-push', 'ProviderError: APNs 410 Unregistered', 3],
    ]);
    const [newest, oldest] = sample.jobs;
    const job = await queue.getJob(oldest!.id);
    expect(oldest!.failedAt).toBe(job?.finishedOn);
    expect(newest!.failedAt).toBeGreaterThanOrEqual(oldest!.failedAt!);
  });

  it('never reads job data, options or stack traces for a dead-letter sample', async () => {
    const queue = open('events');
    await fail(queue, ['ProviderError: boom', 'ProviderError: boom', 'ValueError: bad']);
    await backend.status();
    const monitor = await monitorClient(redisUrl, `queue-ops:${backend.name}`);
    closers.push(() => monitor.stop());
    await backend.dlq('events', 10);
    const { sent } = await monitor.recorded();
    expect(sent.length).toBeGreaterThan(0);
    for (const args of sent) {
      expect(args[0]).not.toMatch(/^(hgetall|hvals|get|lrange|zrange|dump)$/i);
      if (/^hmget|hget$/i.test(args[0]!)) {
        expect(args.slice(2)).not.toEqual(expect.arrayContaining(['data']));
        expect(args.slice(2)).not.toEqual(expect.arrayContaining(['opts']));
        expect(args.slice(2)).not.toEqual(expect.arrayContaining(['stacktrace']));
      }
    }
  });

  it('groups the newest 500 failures by their normalized first line and names the top groups', async () => {
    const queue = open('webhooks');
    const reasons = [
      ...Array.from({ length: 30 }, () => 'OldError: only in the oldest failures'),
      ...Array.from({ length: 520 }, (_, i) =>
        i % 10 < 4
          ? 'ConnectionError: provider timed out'
          : i % 10 < 7
            ? 'HTTPError: 502 Bad Gateway'
            : i % 10 < 9
              ? `RenderError: template ${i % 2}\n    at render`
              : 'ValueError: bad payload',
      ),
    ];
    await fail(queue, reasons.slice(0, 30));
    await fail(queue, reasons.slice(30));

    const sample = await backend.dlq('webhooks', 5);
    expect(sample.total).toBe(550);
    expect(sample.jobs).toHaveLength(5);
    expect(sample.groupedOver).toBe(500);
    // Four groups: the two "RenderError: template N" lines are one.
    expect(sample.topErrors).toHaveLength(4);
    expect(sample.topErrors.reduce((sum, e) => sum + e.count, 0)).toBeLessThanOrEqual(500);
    expect(sample.topErrors.map((e) => e.error)).not.toContain('OldError: only in the oldest failures');
    expect(sample.topErrors[0]?.error).toBe('ConnectionError: provider timed out');
    // "template 0" and "template 1" are one group (numbers normalized), with a real example.
    const render = sample.topErrors.find((e) => e.error.startsWith('RenderError'));
    expect(render?.error).toBe('RenderError: template <n>');
    expect(render?.example).toMatch(/^RenderError: template \d$/);
    expect(sample.topErrors.find((e) => e.error.startsWith('HTTPError'))?.error).toBe(
      'HTTPError: 502 Bad Gateway',
    );
    const counts = sample.topErrors.map((e) => e.count);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('reads a whole system in one round trip: INFO, CLIENT LIST and one script call per batch of queues', async () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) await open(name).add('x', {});
    const queue = open('f');
    await fail(queue, ['ProviderError: boom']);
    names.push('f');
    await backend.status();
    const monitor = await monitorClient(redisUrl, `queue-ops:${backend.name}`);
    closers.push(() => monitor.stop());

    const before = backend.stats();
    const status = await backend.status();
    const after = backend.stats();
    const { sent, inScripts } = await monitor.recorded();

    expect(status.queues.map((q) => q.name)).toEqual(names);
    // MONITOR never shows admin commands, so CLIENT LIST is the one command it cannot see.
    expect(sent.map((args) => args[0]!.toLowerCase())).toEqual([
      'info',
      ...Array.from({ length: Math.ceil(names.length / STATUS_BATCH_QUEUES) }, () => 'evalsha'),
    ]);
    expect(after.commands - before.commands).toBe(sent.length + 1);
    expect(after.roundTrips - before.roundTrips).toBe(1);
    // Inside Redis the scripts only read; none of them writes or walks a whole list or set.
    const ourScriptCommands = inScripts.filter((args) =>
      args.slice(1).some((a) => a.startsWith(`${prefix}:`)),
    );
    expect(ourScriptCommands.length).toBeGreaterThan(0);
    for (const args of ourScriptCommands) {
      expect(args[0]!.toLowerCase()).toMatch(/^(llen|lindex|zcard|zcount|zrange|hexists|hmget)$/);
      if (args[0]!.toLowerCase() === 'zrange') expect(args.slice(2)).toEqual(['0', '0']);
      // Counting new failures (ZCOUNT, O(log n)) is for the monitor; a plain status runs none.
      expect(args[0]!.toLowerCase()).not.toBe('zcount');
    }
  });

  it('gives each queue its own counts across several script batches, in one round trip', async () => {
    // More queues than one batch holds, each with counts of its own (raw keys in BullMQ's layout).
    const total = 2 * STATUS_BATCH_QUEUES + 7;
    const names = Array.from({ length: total }, (_, i) => `q${String(i).padStart(4, '0')}`);
    const seed = new Redis(redisUrl);
    closers.push(async () => seed.disconnect());
    const at = clock - 3_600_000;
    const pipeline = seed.pipeline();
    names.forEach((name, i) => {
      const base = `${prefix}:${name}:`;
      pipeline.hset(`${base}meta`, 'version', 'bullmq:6.7.0', ...(i % 5 === 0 ? ['paused', '1'] : []));
      const waiting = i % 7;
      if (waiting > 0) {
        pipeline.lpush(`${base}wait`, ...Array.from({ length: waiting }, (_, n) => `${i}-${n}`));
        // The next job (the tail): waiting for i minutes.
        pipeline.hset(`${base}${i}-0`, 'timestamp', String(clock - i * 60_000), 'delay', '0');
      }
      for (let n = 0; n < i % 3; n++) pipeline.zadd(`${base}failed`, at + n, `f${n}`);
      for (let n = 0; n < i % 4; n++) pipeline.zadd(`${base}delayed`, at + n, `d${n}`);
    });
    await pipeline.exec();
    await backend.status(); // discovery (SCAN) and the script's first load
    const before = backend.stats();
    const status = await backend.status();
    expect(backend.stats().roundTrips - before.roundTrips).toBe(1);
    expect(status.queues.map((q) => q.name)).toEqual(names);
    status.queues.forEach((q, i) => {
      expect({
        name: q.name,
        waiting: q.waiting,
        failed: q.failed,
        delayed: q.delayed,
        paused: q.isPaused,
      }).toEqual({ name: names[i], waiting: i % 7, failed: i % 3, delayed: i % 4, paused: i % 5 === 0 });
      expect(q.oldestWaitingSeconds).toBe(i % 7 > 0 ? i * 60 : null);
    });
  });
});

describe('BullMQ backend on a private Redis', () => {
  it('loads its script again after Redis forgets it', async () => {
    // SCRIPT FLUSH is server-wide, so it runs on a Redis no other test uses.
    const redis = await startPrivateRedis();
    const admin = new Redis(redis.url);
    const backend = createBullmqBackend(systemFor(redis.url, 'bull'));
    const queue = new Queue('scheduler', { connection: connectionFor(redis.url) });
    try {
      await queue.add('tick', {});
      expect((await backend.status()).queues[0]?.waiting).toBe(1);
      await admin.script('FLUSH');
      const before = backend.stats();
      expect((await backend.status()).queues[0]?.waiting).toBe(1);
      // The NOSCRIPT reply costs one more round trip with EVAL, once.
      expect(backend.stats().roundTrips - before.roundTrips).toBe(2);
      const again = backend.stats();
      await backend.status();
      expect(backend.stats().roundTrips - again.roundTrips).toBe(1);
    } finally {
      await queue.close();
      admin.disconnect();
      await backend.close();
      await redis.stop();
    }
  });

  it('warns when the Redis would evict keys, which BullMQ cannot survive', async () => {
    const redis = await startPrivateRedis();
    const admin = new Redis(redis.url);
    const backend = createBullmqBackend(systemFor(redis.url, 'bull'));
    try {
      let status = await backend.status();
      expect(status.redis.maxMemoryPolicy).toBe('noeviction');
      expect(status.warnings).toEqual([]);
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      status = await backend.status();
      expect(status.warnings).toContainEqual({ code: 'EvictionPolicy', params: { policy: 'allkeys-lru' } });
    } finally {
      admin.disconnect();
      await backend.close();
      await redis.stop();
    }
  });
});

describe('BullMQ backend on a Redis that refuses CLIENT LIST', () => {
  it('still reports counts, and says why it cannot list workers', async () => {
    // Managed Redis services often deny CLIENT; an ACL user without it behaves the same way.
    const redis = await startPrivateRedis();
    const admin = new Redis(redis.url);
    await admin.acl('SETUSER', 'ops', 'on', '>ops-password', '~*', '&*', '+@all', '-client');
    const url = `redis://ops:ops-password@127.0.0.1:${redis.port}`;
    const queue = new Queue('events', { connection: connectionFor(redis.url) });
    const backend = createBullmqBackend(systemFor(url, 'bull'));
    try {
      await queue.add('x', {});
      const status = await backend.status();
      expect(status.queues).toMatchObject([{ name: 'events', waiting: 1 }]);
      expect(status.workers).toEqual([]);
      expect(status.warnings).toEqual([
        { code: 'WorkerInspectFailed', params: { reason: expect.stringMatching(/NOPERM/) } },
      ]);
      await expect(backend.workers()).rejects.toMatchObject({ code: 'NotSupported' });
    } finally {
      await queue.close();
      admin.disconnect();
      await backend.close();
      await redis.stop();
    }
  });
});
