import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { redactUrl } from '../../src/backends/redis-client.js';
import { parseSentinelUrl } from '../../src/backends/redis-endpoint.js';
import type { BullmqSystemConfig, CelerySystemConfig } from '../../src/config/schema.js';
import { celeryEnvelope } from '../../src/demo/seed-celery.js';
import { isOpsError } from '../../src/errors.js';
import { randomName, waitFor } from '../helpers/bullmq-jobs.js';
import {
  makeTestCa,
  parseSystem,
  type RedisProcess,
  type SentinelGroup,
  startSentinelGroup,
  startTlsRedis,
  type TestCa,
} from '../helpers/redis-shapes.js';

describe('a watched Redis behind TLS with a private CA', () => {
  let ca: TestCa;
  let server: RedisProcess;
  beforeAll(async () => {
    ca = makeTestCa();
    server = await startTlsRedis(ca);
  });
  afterAll(async () => {
    await server?.stop();
    ca?.cleanup();
  });

  it('reads BullMQ depth over rediss:// with the CA file from config', async () => {
    const prefix = randomName('tls');
    const producer = new Queue('mail', {
      prefix,
      connection: { host: '127.0.0.1', port: server.port, tls: { ca: readFileSync(ca.ca) } },
    });
    await producer.addBulk([1, 2, 3].map((n) => ({ name: 'send', data: { n } })));
    await producer.close();

    const system = parseSystem<BullmqSystemConfig>({
      name: 'pushizo',
      type: 'bullmq',
      redis: `rediss://127.0.0.1:${server.port}`,
      prefix,
      tls: { ca: ca.ca },
    });
    const backend = createBullmqBackend(system);
    try {
      const status = await backend.status();
      expect(status.queues.find((q) => q.name === 'mail')?.waiting).toBe(3);
    } finally {
      await backend.close();
    }
  });

  it('refuses a server certificate it cannot verify, as an unavailable system and not a crash', async () => {
    const backend = createBullmqBackend(
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        redis: `rediss://127.0.0.1:${server.port}`,
        prefix: 'none',
      }),
      { connectTimeoutMs: 1000 },
    );
    try {
      const error = await backend.status().catch((e: unknown) => e);
      expect(isOpsError(error) && error.code).toBe('RedisUnavailable');
    } finally {
      await backend.close();
    }
  });

  it('reads Celery queues over rediss:// too', async () => {
    const writer = new Redis({
      host: '127.0.0.1',
      port: server.port,
      tls: { ca: readFileSync(ca.ca) },
      db: 3,
    });
    await writer.lpush('alarm_processing', JSON.stringify({ headers: { id: 'a', task: 't' } }));
    await writer.sadd('_kombu.binding.alarm_processing', 'alarm_processing\x06\x16\x06\x16alarm_processing');
    writer.disconnect();
    const backend = createCeleryBackend(
      parseSystem<CelerySystemConfig>({
        name: 'zeus',
        type: 'celery',
        redis: `rediss://127.0.0.1:${server.port}/3`,
        tls: { ca: ca.ca },
        inspectTimeoutMs: 100,
      }),
    );
    try {
      const status = await backend.status();
      expect(status.queues.find((q) => q.name === 'alarm_processing')?.waiting).toBe(1);
    } finally {
      await backend.close();
    }
  });
});

describe('a watched Redis that asks for a client certificate (tls-auth-clients yes)', () => {
  let ca: TestCa;
  let server: RedisProcess;
  beforeAll(async () => {
    ca = makeTestCa();
    server = await startTlsRedis(ca, { clientCertificates: true });
  });
  afterAll(async () => {
    await server?.stop();
    ca?.cleanup();
  });

  const system = (tls: Record<string, string>) =>
    parseSystem<CelerySystemConfig>({
      name: 'zeus',
      type: 'celery',
      redis: `rediss://127.0.0.1:${server.port}/0`,
      queues: ['celery'],
      tls,
      inspectTimeoutMs: 100,
    });

  it('reads with tls.cert and tls.key from config, and without them is an unavailable system, not a crash', async () => {
    const admitted = createCeleryBackend(system({ ca: ca.ca, cert: ca.clientCert, key: ca.clientKey }));
    try {
      const status = await admitted.status();
      expect(status.queues.map((q) => q.name)).toEqual(['celery']);
      expect(status.redis.usedMemoryBytes).toBeGreaterThan(0);
    } finally {
      await admitted.close();
    }
    const refused = createCeleryBackend(system({ ca: ca.ca }));
    try {
      const error = await refused.status().catch((e: unknown) => e);
      expect(isOpsError(error) && error.code).toBe('RedisUnavailable');
    } finally {
      await refused.close();
    }
  });
});

describe('a watched Redis behind Sentinel', () => {
  let group: SentinelGroup;
  beforeAll(async () => {
    group = await startSentinelGroup('mymaster');
  });
  afterAll(async () => {
    await group?.stop();
  });

  it('parses Celery’s sentinel:// broker form: hosts, master name, db, the master’s password', () => {
    expect(parseSentinelUrl('sentinel://:pw@h1:26379;sentinel://h2:26380/mymaster')).toEqual({
      sentinels: [
        { host: 'h1', port: 26379 },
        { host: 'h2', port: 26380 },
      ],
      name: 'mymaster',
      db: 0,
      password: 'pw',
    });
    expect(parseSentinelUrl('sentinel://h1:26379/2').db).toBe(2);
    expect(redactUrl('sentinel://:pw@h1:26379;sentinel://:pw@h2:26379/m')).toBe(
      'sentinel://***@h1:26379;sentinel://***@h2:26379/m',
    );
  });

  it('keeps answering BullMQ status through a failover, from the sentinel URL alone', async () => {
    const prefix = randomName('sen');
    const masterBefore = await masterPort(group);
    const direct = new Queue('dispatch', { prefix, connection: { host: '127.0.0.1', port: masterBefore } });
    await direct.addBulk([1, 2].map((n) => ({ name: 'push', data: { n } })));
    await direct.close();
    const backend = createBullmqBackend(
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        redis: `sentinel://127.0.0.1:${group.sentinel.port}/mymaster`,
        prefix,
      }),
    );
    const waiting = async () => (await backend.status()).queues.find((q) => q.name === 'dispatch')?.waiting;
    try {
      expect(await waiting()).toBe(2);
      const promotedPort = await failOverDuringReads(group, `${prefix}:dispatch:wait`, waiting, 2);
      // The backend now talks to the former replica: a write there shows in its next status.
      const promoted = new Queue('dispatch', {
        prefix,
        connection: { host: '127.0.0.1', port: promotedPort },
      });
      await promoted.add('push', { n: 3 });
      await promoted.close();
      await waitFor('status from the new master', async () => (await waiting().catch(() => undefined)) === 3);
    } finally {
      await backend.close();
    }
  }, 60_000);

  it('keeps answering Celery status through a failover, from the broker URL alone', async () => {
    const queue = randomName('zeus_failover');
    const publish = async (port: number, n: number) => {
      const redis = new Redis({ host: '127.0.0.1', port });
      await redis.lpush(
        queue,
        ...Array.from({ length: n }, (_, i) =>
          JSON.stringify(celeryEnvelope({ queue, task: 'tasks.add', args: [i, 1], priority: 0 })),
        ),
      );
      redis.disconnect();
    };
    await publish(await masterPort(group), 2);
    const backend = createCeleryBackend(
      parseSystem<CelerySystemConfig>({
        name: 'zeus',
        type: 'celery',
        redis: `sentinel://127.0.0.1:${group.sentinel.port}/mymaster`,
        queues: [queue],
        inspectTimeoutMs: 100,
      }),
    );
    const waiting = async () => (await backend.status()).queues.find((q) => q.name === queue)?.waiting;
    try {
      expect(await waiting()).toBe(2);
      const promotedPort = await failOverDuringReads(group, queue, waiting, 2);
      await publish(promotedPort, 1);
      await waitFor('status from the new master', async () => (await waiting().catch(() => undefined)) === 3);
    } finally {
      await backend.close();
    }
  }, 60_000);

  it('reads Celery through the broker URL with several sentinels, the first of them down', async () => {
    // Celery's own form, `sentinel://h1;sentinel://h2/master`: a sentinel that does not answer is
    // passed over for the next, as kombu does.
    const redis = new Redis({
      sentinels: [{ host: '127.0.0.1', port: group.sentinel.port }],
      name: 'mymaster',
    });
    await redis.lpush('celery', JSON.stringify({ headers: { id: 'x' }, properties: { delivery_tag: 't1' } }));
    redis.disconnect();
    const backend = createCeleryBackend(
      parseSystem<CelerySystemConfig>({
        name: 'zeus',
        type: 'celery',
        redis: `sentinel://127.0.0.1:1;sentinel://127.0.0.1:${group.sentinel.port}/mymaster`,
        queues: ['celery'],
        inspectTimeoutMs: 100,
      }),
    );
    // The dead sentinel is not reported on stderr (ioredis' own "Unhandled error event" lines).
    const printed = vi.spyOn(console, 'error');
    try {
      const status = await backend.status();
      expect(status.queues.find((q) => q.name === 'celery')?.waiting).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // About the dead sentinel only: a client of another test in this process may print its own.
      const aboutDeadSentinel = (call: unknown[]) =>
        String(call[0]).includes('[ioredis]') && /127\.0\.0\.1:1\b/.test(call.map(String).join(' '));
      expect(printed.mock.calls.filter(aboutDeadSentinel)).toEqual([]);
    } finally {
      printed.mockRestore();
      await backend.close();
      const cleanup = new Redis({
        sentinels: [{ host: '127.0.0.1', port: group.sentinel.port }],
        name: 'mymaster',
      });
      await cleanup.del('celery');
      cleanup.disconnect();
    }
  });

  it('finds the master through sentinel.sentinels from config, with a plain redis:// URL for the db', async () => {
    const prefix = randomName('sen');
    const system = parseSystem<BullmqSystemConfig>({
      name: 'pushizo',
      type: 'bullmq',
      // The host here is not used: the sentinels are. The URL still gives the db (and password).
      redis: 'redis://127.0.0.1:1/0',
      sentinel: { sentinels: [`127.0.0.1:${group.sentinel.port}`], name: 'mymaster' },
      prefix,
      queues: ['mail'],
    });
    // Written through the sentinel too: an earlier test failed the master over.
    const producer = new Queue('mail', {
      prefix,
      connection: { sentinels: [{ host: '127.0.0.1', port: group.sentinel.port }], name: 'mymaster' },
    });
    await producer.add('send', {});
    await producer.close();
    const backend = createBullmqBackend(system);
    try {
      const status = await backend.status();
      expect(status.queues).toMatchObject([{ name: 'mail', waiting: 1 }]);
    } finally {
      await backend.close();
    }
  });

  it('takes the master name from config when the URL does not carry it, and refuses neither', async () => {
    const system = parseSystem<CelerySystemConfig>({
      name: 'zeus',
      type: 'celery',
      redis: `sentinel://127.0.0.1:${group.sentinel.port}`,
      sentinel: { name: 'mymaster' },
      inspectTimeoutMs: 100,
    });
    const backend = createCeleryBackend(system);
    try {
      const status = await backend.status();
      expect(status.redis.usedMemoryBytes).toBeGreaterThan(0);
    } finally {
      await backend.close();
    }
  });
});

/** The port of the master the sentinel names now (an earlier test may have failed it over). */
async function masterPort(group: SentinelGroup): Promise<number> {
  const admin = new Redis({ host: '127.0.0.1', port: group.sentinel.port });
  try {
    const [, port] = (await admin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', group.name)) as [
      string,
      string,
    ];
    return Number(port);
  } finally {
    admin.disconnect();
  }
}

/**
 * Fails the master over once `key` has reached the replica, reading all along: a read may fail
 * for a moment (as RedisUnavailable, nothing else), then `read` answers `expected` from the
 * promoted replica. Returns the new master's port.
 */
async function failOverDuringReads(
  group: SentinelGroup,
  key: string,
  read: () => Promise<number | undefined>,
  expected: number,
): Promise<number> {
  const before = await masterPort(group);
  const replicaPort = before === group.master.port ? group.replica.port : group.master.port;
  const replica = new Redis({ host: '127.0.0.1', port: replicaPort });
  const admin = new Redis({ host: '127.0.0.1', port: group.sentinel.port });
  try {
    // After an earlier failover the sentinel turns the old master into a replica only on its next
    // look at it (up to ~10 s), and only then does the key reach it.
    await waitFor('the replica to catch up', async () => (await replica.exists(key)) === 1, 30_000);
    await waitFor('the sentinel to start a failover', async () =>
      admin.call('SENTINEL', 'FAILOVER', group.name).then(
        () => true,
        () => false,
      ),
    );
    let answered: number | undefined;
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      try {
        answered = await read();
        const role = await replica.info('replication');
        if (answered === expected && role.includes('role:master')) break;
      } catch (error) {
        expect(isOpsError(error) && error.code).toBe('RedisUnavailable');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answered).toBe(expected);
    expect(await replica.info('replication')).toContain('role:master');
    await waitFor(
      'the sentinel to name the new master',
      async () => (await masterPort(group)) === replicaPort,
    );
    return replicaPort;
  } finally {
    replica.disconnect();
    admin.disconnect();
  }
}
