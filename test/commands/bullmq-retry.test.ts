import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, waitFor } from '../helpers/bullmq-jobs.js';
import { jsonOf, requestOf, runCli, tempDir } from '../helpers/cli-run.js';
import { TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const SECRET = 'apns-token-never-shown';

describe('retry of failed BullMQ jobs from the command line, under policy and approval', () => {
  const redisUrl = testRedisUrl();
  const queueName = 'dispatch-ios';
  const target = `pushizo/${queueName}`;
  let prefix: string;
  let queue: Queue;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  const as = (user: string, ...words: string[]) =>
    runCli(['--config', config, '--user', user, '--json', ...words], { timeoutMs: 60_000 });

  beforeEach(async () => {
    prefix = `qr${randomBytes(5).toString('hex')}`;
    queue = new Queue(queueName, { connection: connectionFor(redisUrl), prefix });
    await queue.addBulk(
      Array.from({ length: 8 }, (_, n) => ({
        name: 'send',
        data: { n, token: SECRET },
        opts: { attempts: 1 },
      })),
    );
    const failing = new Worker(
      queueName,
      async (job) => {
        throw new Error(job.data.n < 6 ? 'APNs 429 TooManyRequests <@U0ALL>' : 'APNs 410 Unregistered');
      },
      { connection: connectionFor(redisUrl), prefix },
    );
    try {
      await waitFor('eight failures', async () => (await queue.getJobCounts('failed')).failed === 8);
    } finally {
      await failing.close();
    }
    tmp = tempDir('bullmq-retry');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      approvals: { cliSameOsUser: 'allow' },
      policies: { retry: { role: 'operator', approvals: 1 } },
      systems: [{ name: 'pushizo', type: 'bullmq', redis: redisUrl, prefix }],
    });
  });

  afterEach(async () => {
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it('previews the newest failures and their errors, runs on approval, and a worker processes the jobs', async () => {
    const newest = await queue.getFailed(0, 4);
    const asked = await as('U0ALICE', 'retry', target, 'all', '5');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending).toMatchObject({ action: 'retry', target, status: 'pending', requiredApprovals: 1 });
    expect(pending.preview).toContain('5 failed jobs of 8, newest first');
    expect(pending.preview).toMatch(/APNs (429|410)/);
    expect(asked.stdout).not.toContain(SECRET);
    // error text from Redis is escaped in the blocks: no mention can form
    expect(JSON.stringify(jsonOf(asked).message.blocks)).not.toContain('<@U0ALL>');
    expect((await queue.getJobCounts('failed')).failed).toBe(8);

    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const done = requestOf(approved);
    expect(done.status).toBe('done');
    expect(done.result).toEqual({
      queue: queueName,
      retried: 5,
      skipped: 0,
      ids: Object.fromEntries(newest.map((job) => [job.id, job.id])),
      newSincePreview: 0,
    });
    expect(jsonOf(approved).message.text).toBeTruthy();
    expect(JSON.stringify(jsonOf(approved).message.blocks)).toContain(
      `5 jobs of ${target} back in the queue`,
    );
    expect(await queue.getJobCounts('failed', 'wait')).toMatchObject({ failed: 3, wait: 5 });

    const ran: number[] = [];
    const worker = new Worker(
      queueName,
      async (job) => {
        ran.push(job.data.n as number);
      },
      { connection: connectionFor(redisUrl), prefix },
    );
    try {
      await waitFor('the five retried jobs to complete', async () => ran.length === 5);
    } finally {
      await worker.close();
    }
    expect(ran.sort()).toEqual(newest.map((job) => job.data.n as number).sort());

    const exported = await runCli(['--config', config, 'audit', 'export']);
    const action = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { action: string; outcome: string; params: Record<string, unknown> })
      .find((entry) => entry.action === 'action.retry');
    expect(action).toMatchObject({ outcome: 'done', params: { limit: 5, result: { retried: 5 } } });
  }, 120_000);

  it('answers bad input in one line naming what is valid, and changes nothing', async () => {
    const unknown = await as('U0ALICE', 'retry', target, '12345');
    expect(unknown.code).toBe(1);
    expect(jsonOf(unknown).error?.message).toBe(
      `\`${target}\` has no failed job \`12345\`. Valid: the id of one of its failed jobs (\`/queue dlq ${target}\`), or \`all\`.`,
    );
    const zero = await as('U0ALICE', 'retry', target, 'all', '0');
    expect(zero.code).toBe(2);
    expect(jsonOf(zero).error?.message).toBe(
      '`0` is not a valid limit. Valid: a whole number from 1 to 1000.',
    );
    const limitWithId = await as('U0ALICE', 'retry', target, '3', '10');
    expect(limitWithId.code).toBe(2);
    expect(jsonOf(limitWithId).error?.message).toBe(
      'A limit only goes with `all`. Usage: `/queue retry <system>/<queue> <job-id|all> [limit] [--error <text>] [--group <key>] [--name <name>] [--older-than <d>] [--newer-than <d>]`',
    );
    const queueUnknown = await as('U0ALICE', 'retry', 'pushizo/dispatch-iso', 'all');
    expect(queueUnknown.code).toBe(1);
    expect(jsonOf(queueUnknown).error?.code).toBe('UnknownQueue');
    expect((await queue.getJobCounts('failed')).failed).toBe(8);
  }, 120_000);
});
