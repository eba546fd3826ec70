import Database from 'better-sqlite3';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as runCliHere } from '../../src/transports/cli/run.js';
import { fakeSlack } from '../escalation/fake-slack.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, type RequestJson, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const SLACK = 'https://slack.limits.test';

/**
 * `concurrency` and `rate-limit` on BullMQ queues, asked and approved by two people on the command
 * line, honoured by real BullMQ Workers, shown by `status`, and lifted by the monitor when a
 * `--for` runs out.
 */
describe('BullMQ global concurrency and rate limit from the command line', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('lim');
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let redis: Redis;
  const queues: Queue[] = [];
  const workers: Worker[] = [];

  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);
  /** Asked by Alice, approved by Carol (policy: one approval): the approved request. */
  const setAndApprove = async (
    ...words: string[]
  ): Promise<{ asked: RequestJson; done: RequestJson; text: string }> => {
    const asked = await as('U0ALICE', ...words);
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const request = requestOf(asked);
    expect(request.status).toBe('pending');
    const approved = await as('U0CAROL', 'approve', request.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    return {
      asked: request,
      done: requestOf(approved),
      text: JSON.stringify(jsonOf(approved).message.blocks),
    };
  };
  const meta = (queue: string) => redis.hgetall(`${prefix}:${queue}:meta`);
  const queueStatus = async (queue: string) => {
    const out = jsonOf(await as('U0DAVE', 'status', `pushizo/${queue}`));
    const system = (out.data as { systems: { queues: Record<string, unknown>[]; limits: unknown[] }[] })
      .systems[0]!;
    return { queue: system.queues.find((q) => q.name === queue)!, limits: system.limits, text: out.message };
  };

  /** Runs `count` jobs through a Worker allowed `concurrency` at once; the most that ran together. */
  async function mostAtOnce(queue: Queue, count: number): Promise<number> {
    let running = 0;
    let most = 0;
    let done = 0;
    const worker = new Worker(
      queue.name,
      async (_job: Job) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 100));
        running--;
        done++;
      },
      { connection: connectionFor(redisUrl), prefix, concurrency: 5 },
    );
    workers.push(worker);
    await queue.addBulk(Array.from({ length: count }, (_, n) => ({ name: 'send', data: { n } })));
    await expect.poll(() => done, { timeout: 20_000, interval: 50 }).toBe(count);
    await worker.close();
    return most;
  }

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    tmp = tempDir('limits-bullmq');
    for (const name of ['emails', 'sms', 'legacy'])
      queues.push(new Queue(name, { connection: connectionFor(redisUrl), prefix }));
    await Promise.all(queues.map((q) => q.waitUntilReady()));
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      approvals: { cliSameOsUser: 'allow' },
      slack: { incidentChannel: 'C0INCIDENT' },
      systems: [
        bullmqSystem('pushizo', redisUrl, prefix, {
          queues: ['emails', 'sms', 'legacy'],
          slack: { alertChannel: 'C0PUSHIZO' },
        }),
      ],
    });
  });

  afterAll(async () => {
    for (const worker of workers) await worker.close();
    for (const queue of queues) await queue.close();
    await deletePrefix(redisUrl, prefix);
    redis.disconnect();
    nock.cleanAll();
    nock.enableNetConnect();
    tmp.remove();
  });

  it('concurrency 1 is written where BullMQ reads it: a Worker of concurrency 5 runs one job at a time, and five again after off', async () => {
    const emails = queues[0]!;
    const { asked, done, text } = await setAndApprove('concurrency', 'pushizo/emails', '1');
    expect(asked).toMatchObject({ action: 'concurrency', target: 'pushizo/emails', requiredApprovals: 1 });
    expect(asked.preview).toContain('global concurrency 1 (at most 1 job at once across all workers)');
    expect(asked.preview).toContain('(now: none)');
    expect(asked.preview).toMatch(/written by bullmq:6\.\d+\.\d+/);
    expect(done).toMatchObject({
      status: 'done',
      result: { kind: 'concurrency', value: 1, previous: { value: null }, now: 1 },
    });
    expect(text).toContain('pushizo/emails: none → concurrency 1');
    // Exactly the field `Queue.setGlobalConcurrency(1)` writes.
    expect((await meta('emails')).concurrency).toBe('1');
    expect(await emails.getGlobalConcurrency()).toBe(1);

    const seen = await queueStatus('emails');
    expect(seen.queue.limits).toEqual({ concurrency: 1, rateLimit: null });
    expect(seen.limits).toMatchObject([
      { target: 'emails', kind: 'concurrency', value: 1, setBy: 'U0ALICE', expiresAt: null },
    ]);
    expect(JSON.stringify(seen.text.blocks)).toContain('Limits: `emails` concurrency 1');

    expect(await mostAtOnce(emails, 12)).toBe(1);

    const off = await setAndApprove('concurrency', 'pushizo/emails', 'off');
    expect(off.asked.preview).toContain('lift the global concurrency (back to none)');
    expect(off.done.result).toMatchObject({
      value: null,
      previous: { value: 1 },
      now: null,
      lifted: asked.id,
    });
    expect((await meta('emails')).concurrency).toBeUndefined();
    expect(await mostAtOnce(emails, 12)).toBeGreaterThan(1);
    expect((await queueStatus('emails')).limits).toEqual([]);

    // The action and what it replaced are in the audit trail.
    const audit = JSON.stringify(jsonOf(await as('U0BOB', 'audit')).data);
    expect(audit).toContain('action.concurrency');
  }, 120_000);

  describe('a rate limit of 3 per hour', () => {
    // Steps in order: each starts from the limit the one before left.
    it('lets a Worker of concurrency 5 take exactly 3 of 10 jobs', async () => {
      const sms = queues[1]!;
      const { asked, done } = await setAndApprove('rate-limit', 'pushizo/sms', '3/1h');
      expect(asked.preview).toContain('global rate limit 3 per 1h');
      expect(done.result).toMatchObject({
        kind: 'rate-limit',
        value: { max: 3, durationMs: 3_600_000 },
        now: { max: 3, durationMs: 3_600_000 },
      });
      // What `Queue.setGlobalRateLimit(3, 3600000)` writes, and reads back through BullMQ itself.
      expect(await meta('sms')).toMatchObject({ max: '3', duration: '3600000' });
      expect(await sms.getGlobalRateLimit()).toEqual({ max: 3, duration: 3_600_000 });

      let processed = 0;
      const worker = new Worker(sms.name, async () => void processed++, {
        connection: connectionFor(redisUrl),
        prefix,
        concurrency: 5,
      });
      workers.push(worker);
      await sms.addBulk(Array.from({ length: 10 }, (_, n) => ({ name: 'sms', data: { n } })));
      await expect.poll(() => processed, { timeout: 15_000 }).toBe(3);
      // Given every chance to take more: the worker is rate limited, not slow.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(processed).toBe(3);
      expect(await sms.getWaitingCount()).toBe(7);
      await worker.close();
    }, 60_000);

    it('is shown by status', async () => {
      const seen = await queueStatus('sms');
      expect(seen.queue.limits).toEqual({ concurrency: null, rateLimit: { max: 3, durationMs: 3_600_000 } });
      expect(JSON.stringify(seen.text.blocks)).toContain('Limits: `sms` 3 per 1h');
    });

    it('off removes max and duration', async () => {
      const off = await setAndApprove('rate-limit', 'pushizo/sms', 'off');
      expect(off.done.result).toMatchObject({
        previous: { value: { max: 3, durationMs: 3_600_000 } },
        now: null,
      });
      const after = await meta('sms');
      expect(after.max).toBeUndefined();
      expect(after.duration).toBeUndefined();
    });
  });

  it('a --for limit is lifted by the monitor when its time is up: audited, and the alert channel is told', async () => {
    const slack = fakeSlack(SLACK);
    nock.enableNetConnect('127.0.0.1');
    const { done } = await setAndApprove('concurrency', 'pushizo/emails', '2', '--for', '1h');
    const expiresAt = String(done.result?.expiresAt);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    expect((await meta('emails')).concurrency).toBe('2');
    expect((await queueStatus('emails')).limits).toMatchObject([{ target: 'emails', expiresAt }]);

    const monitor = async () => {
      const code = await runCliHere({
        argv: ['--config', config, 'monitor', '--once', '--json'],
        env: { SLACK_BOT_TOKEN: 'xoxb-limits', SLACK_API_URL: `${SLACK}/api` },
        cwd: tmp.dir,
        stdout: () => {},
        stderr: () => {},
        osUser: 'cron',
      });
      expect(code).toBe(0);
    };
    // Before its time: nothing is lifted.
    await monitor();
    expect((await meta('emails')).concurrency).toBe('2');
    // The hour passes: the expiry is read back from the store by a monitor process of its own.
    const db = new Database(`${tmp.dir}/queue-ops.db`);
    db.prepare('UPDATE queue_limits SET expires_at = ? WHERE id = ?').run(
      new Date(Date.now() - 1000).toISOString(),
      done.id,
    );
    db.close();
    await monitor();
    expect((await meta('emails')).concurrency).toBeUndefined();
    expect((await queueStatus('emails')).limits).toEqual([]);
    const notice = slack
      .delivered()
      .find((c) => c.method === 'chat.postMessage' && /ran out/.test(c.body.text ?? ''));
    expect(notice?.body.channel).toBe('C0PUSHIZO');
    expect(notice?.body.text).toBe(
      'The concurrency limit concurrency 2 of pushizo/emails ran out and was lifted: back to none (set by U0ALICE).',
    );
    const entries = (
      jsonOf(await as('U0BOB', 'audit')).data as {
        entries: { action: string; actorId: string; target: string }[];
      }
    ).entries;
    expect(entries.find((e) => e.action === 'limit.expired')).toMatchObject({
      actorId: 'queue-ops',
      target: 'pushizo/emails',
    });
    // Lifted once: the next tick finds nothing due.
    await monitor();
    expect(slack.delivered().filter((c) => /ran out/.test(c.body.text ?? ''))).toHaveLength(1);
  }, 120_000);

  it('refuses, in one line naming what is valid, bad values and a limit the queue’s BullMQ does not have', async () => {
    const line = async (...words: string[]) => {
      const run = await as('U0ALICE', ...words);
      expect(run.code).not.toBe(0);
      const out = jsonOf(run);
      expect(out.message.text.split('\n')).toHaveLength(1);
      return out.message.text;
    };
    const validConcurrency = 'Valid: a whole number of jobs at once from 1 to 10000, or `off`.';
    expect(await line('concurrency', 'pushizo/emails', '0')).toBe(
      `\`0\` is not a concurrency. ${validConcurrency}`,
    );
    expect(await line('concurrency', 'pushizo/emails', '-1')).toBe(
      `\`-1\` is not a concurrency. ${validConcurrency}`,
    );
    expect(await line('concurrency', 'pushizo/emails', 'abc')).toBe(
      `\`abc\` is not a concurrency. ${validConcurrency}`,
    );
    expect(await line('rate-limit', 'pushizo/emails', '100/parsec')).toMatch(
      /^`100\/parsec` is not a rate limit\. Valid: `max\/duration`: .* e\.g\. `100\/1m`, `10\/s`, `50\/500ms`; or `off`\.$/,
    );
    expect(await line('concurrency', 'pushizo/emails', '2', '--for', 'forever')).toBe(
      '`forever` is not how long a limit lasts. Valid: `--for` with 30s, 30m, 2h or 1d, at most 7d.',
    );
    expect(await line('concurrency', 'pushizo/sms', 'off')).toContain('has no concurrency limit to lift');

    // A queue last written by BullMQ 5.41.0: it has global concurrency (5.9.0) but no global rate limit (5.60.0).
    await redis.hset(`${prefix}:legacy:meta`, 'version', 'bullmq:5.41.0');
    expect(await line('rate-limit', 'pushizo/legacy', '10/s')).toBe(
      "`pushizo` (bullmq) cannot set a global rate limit on `legacy`: its meta was written by `bullmq:5.41.0`, and BullMQ's workers honour it from 5.60.0.",
    );
    expect(requestOf(await as('U0ALICE', 'concurrency', 'pushizo/legacy', '3')).status).toBe('pending');
    await redis.hset(`${prefix}:legacy:meta`, 'version', 'bullmq:5.8.2');
    expect(await line('concurrency', 'pushizo/legacy', '3')).toContain('honour it from 5.9.0');
    expect((await meta('legacy')).concurrency).toBeUndefined();
  }, 60_000);
});
