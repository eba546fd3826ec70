import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Request } from '../../src/pipeline/types.js';
import { connectionFor, deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * README's incident story says `retry … all` posts a request and waits for a second person: a
 * whole dead-letter list re-queued at once is hard to take back. By default a retry of more than
 * one job needs one approval (`policies.retry.bulkApprovals: 1`); one job still runs at once
 * (`approvals: 0`). Real BullMQ failures on the test Redis, a real SQLite store.
 */
const redis = testRedisUrl();
const QUEUE = 'webhooks';

describe('the default retry policy', () => {
  let dir: string;
  let prefix: string;
  let queue: Queue;
  let ops: QueueOps | undefined;

  const as = (user: string, words: string[]): Request => ({
    actor: { id: user },
    via: 'slack',
    channel: 'C0INCIDENT',
    words,
    locale: 'en',
  });

  async function fail(count: number): Promise<void> {
    await queue.addBulk(
      Array.from({ length: count }, (_, n) => ({ name: 'hook', data: { n }, opts: { attempts: 1 } })),
    );
    const worker = new Worker(
      QUEUE,
      async () => {
        throw new Error('endpoint 502');
      },
      { connection: connectionFor(redis), prefix },
    );
    try {
      await waitFor(`${count} failures`, async () => (await queue.getJobCounts('failed')).failed === count);
    } finally {
      await worker.close();
    }
  }

  async function start(policies: ConfigInput['policies'] = {}): Promise<QueueOps> {
    ops = await createQueueOps({
      config: parseConfig(
        configYaml({
          slack: { allowedChannels: ['C0INCIDENT'] },
          store: `sqlite:${join(dir, 'store.db')}`,
          roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'] },
          policies,
          systems: [bullmqSystem('pushizo', redis, prefix, { queues: [QUEUE] })],
        }),
        {},
      ),
      env: {},
      logger: silentLogger(),
    });
    return ops;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qo-retry-default-'));
    prefix = randomName('rdef');
    queue = new Queue(QUEUE, { connection: connectionFor(redis), prefix });
  });
  afterEach(async () => {
    await ops?.close();
    ops = undefined;
    await queue.close();
    await deletePrefix(redis, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is one approval for more than one job, none for one', () => {
    const config = parseConfig(
      configYaml({ store: `sqlite:${join(dir, 'x.db')}`, systems: [bullmqSystem('pushizo', redis)] }),
      {},
    );
    expect(config.policies.retry).toEqual({ role: 'operator', approvals: 0, bulkApprovals: 1 });
  });

  it('`retry … all` of several failed jobs waits for a second person, then runs', async () => {
    await fail(3);
    const app = await start();
    const asked = await app.dispatcher.handle(as('U0ALICE', ['retry', `pushizo/${QUEUE}`, 'all']));
    expect(asked.ok, asked.message.text).toBe(true);
    const [pending] = await app.approvals.pending();
    expect(pending).toMatchObject({ action: 'retry', status: 'pending', requiredApprovals: 1 });
    // Nothing has run yet.
    expect((await queue.getJobCounts('failed')).failed).toBe(3);

    const approved = await app.dispatcher.handle(as('U0BOB', ['approve', pending!.id]));
    expect(approved.ok, approved.message.text).toBe(true);
    expect((await app.approvals.get(pending!.id))?.status).toBe('done');
    expect((await queue.getJobCounts('failed')).failed).toBe(0);
  });

  it('one job (by id, or `all` when one failed) runs at once, and only that one', async () => {
    await fail(1);
    const app = await start();
    const [job] = await queue.getFailed();
    const byId = await app.dispatcher.handle(as('U0ALICE', ['retry', `pushizo/${QUEUE}`, job!.id!]));
    expect(byId.ok, byId.message.text).toBe(true);
    expect(await app.approvals.pending()).toEqual([]);
    expect((await queue.getJobCounts('failed')).failed).toBe(0);

    await queue.obliterate({ force: true });
    await fail(1);
    const one = await app.dispatcher.handle(as('U0ALICE', ['retry', `pushizo/${QUEUE}`, 'all']));
    expect(one.ok, one.message.text).toBe(true);
    expect(await app.approvals.pending()).toEqual([]);
    expect((await queue.getJobCounts('failed')).failed).toBe(0);
  });

  it('`bulkApprovals: 0` runs a bulk retry at once, as configured', async () => {
    await fail(3);
    const app = await start({ retry: { role: 'operator', approvals: 0, bulkApprovals: 0 } });
    const ran = await app.dispatcher.handle(as('U0ALICE', ['retry', `pushizo/${QUEUE}`, 'all']));
    expect(ran.ok, ran.message.text).toBe(true);
    expect(await app.approvals.pending()).toEqual([]);
    expect((await queue.getJobCounts('failed')).failed).toBe(0);
  });
});
