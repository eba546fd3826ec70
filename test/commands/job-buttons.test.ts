import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { ActionId } from '../../src/blocks/action-ids.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import { RequestStatus } from '../../src/store/store.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  buttonClick,
  captureResponses,
  type Harness,
  randomId,
  slackAround,
} from '../transports/slack/harness.js';

const HOLDER = join(import.meta.dirname, '../fixtures/bullmq/hold-worker.mjs');
const LOCK_MS = 1500;
const QUEUE = 'dispatch-ios';

const people = {
  alice: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0TEAM' },
  bob: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
  zed: { id: 'U0ZED', username: 'zed', name: 'zed', team_id: 'T0TEAM' },
};
type Who = keyof typeof people;

/**
 * The job view's Fail (BullMQ) and Revoke (Celery) buttons, through the real Slack listeners and
 * the real dispatcher, on a job a real BullMQ worker holds in a process of its own: pressed twice
 * (the lock lapsing in between, and by a second operator), and forged (by a viewer, with values
 * naming what the view never offered).
 */
describe('the job view’s Fail and Revoke buttons, pressed twice and forged', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('jobbtn');
  const dir = mkdtempSync(join(tmpdir(), 'qo-job-buttons-'));
  let ops: QueueOps;
  let slack: Harness;
  let queue: Queue;
  let child: ChildProcess;
  let jobId: string;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    queue = new Queue(QUEUE, { connection: connectionFor(redisUrl), prefix });
    const job = await queue.add('send-push', { token: 'device-token-secret' }, { attempts: 5 });
    jobId = job.id!;
    child = spawn(process.execPath, [HOLDER], {
      env: {
        ...process.env,
        QO_REDIS_URL: redisUrl,
        QO_PREFIX: prefix,
        QO_QUEUE: QUEUE,
        QO_WORKER_NAME: 'dispatch-worker-1',
        QO_LOCK_MS: String(LOCK_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the worker never started the job')), 15_000);
      child.stdout!.on('data', (chunk) => {
        if (String(chunk).includes(`started ${jobId}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const config = parseConfig(
      configYaml({
        systems: [
          bullmqSystem('pushizo', redisUrl, prefix, { queues: [QUEUE] }),
          { name: 'zeus', type: 'celery', redis: redisUrl, queues: ['celery'], inspectTimeoutMs: 300 },
        ],
        slack: { allowedChannels: ['C0INCIDENT'] },
        store: `sqlite:${join(dir, 'store.db')}`,
        roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'] },
        policies: { fail: { role: 'operator', approvals: 1 }, revoke: { role: 'operator', approvals: 1 } },
        rateLimit: { perUserPerMinute: 1000 },
      }),
      {},
    );
    ops = await createQueueOps({ config, env: {}, logger: silentLogger() });
    slack = slackAround(ops.dispatcher, { logger: silentLogger() });
  });

  afterAll(async () => {
    if (child?.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await ops?.close();
    await queue?.obliterate({ force: true });
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    nock.cleanAll();
    nock.enableNetConnect();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One click by `who`; resolves with the text of what Slack was answered. */
  async function click(who: Who, actionId: string, value: string): Promise<string> {
    const path = `/actions/T0TEAM/${randomId('')}/click`;
    const { bodies } = captureResponses(path);
    await slack.send(buttonClick(actionId, value, path, { user: people[who] }));
    expect(bodies).toHaveLength(1);
    return JSON.stringify(bodies[0]);
  }

  const pendingFails = async () =>
    (await ops.approvals.pending()).filter((r) => r.action === 'fail' || r.action === 'revoke');

  it('the view offers Fail on the held job; pressed twice (its lock lapsing in between) and by a second operator, one request waits and each later press names it', async () => {
    const view = await click('alice', ActionId.JobRefresh, `pushizo/${QUEUE}/${jobId}`);
    expect(view).toContain(ActionId.JobFail);
    expect(view).toContain(`"value":"pushizo/${QUEUE}/${jobId}"`);

    const first = await click('alice', ActionId.JobFail, `pushizo/${QUEUE}/${jobId}`);
    const [request] = await pendingFails();
    expect(request?.target).toBe(`pushizo/${QUEUE}/${jobId}`);
    expect(first).toContain(request!.id);

    // The worker stops; its lock runs out: the job is now stalled, still active.
    child.kill('SIGSTOP');
    const redis = new Redis(redisUrl);
    try {
      await expect
        .poll(() => redis.exists(`${prefix}:${QUEUE}:${jobId}:lock`), { timeout: 10_000, interval: 100 })
        .toBe(0);
    } finally {
      redis.disconnect();
    }

    const again = await click('alice', ActionId.JobFail, `pushizo/${QUEUE}/${jobId}`);
    const byBob = await click('bob', ActionId.JobFail, `pushizo/${QUEUE}/${jobId}`);
    for (const answer of [again, byBob]) {
      expect(answer).toContain(request!.id);
      expect(answer).toContain('already');
    }
    expect((await pendingFails()).map((r) => r.id)).toEqual([request!.id]);

    // Bob approves the one request: the job fails with the default reason naming who asked.
    await click('bob', ActionId.Approve, request!.id);
    expect((await ops.approvals.get(request!.id))?.status).toBe(RequestStatus.Done);
    const job = (await queue.getJob(jobId))!;
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toBe('failed by alice with queue-ops');

    // Pressed once more on the old view: one line, nothing asked.
    const late = await click('alice', ActionId.JobFail, `pushizo/${QUEUE}/${jobId}`);
    expect(late).toContain('is failed, not active');
    expect(await pendingFails()).toEqual([]);
  });

  it('forged presses change nothing: each is one line and no request is made', async () => {
    const before = (await ops.store.listRequests()).length;
    const answers = {
      viewer: await click('zed', ActionId.JobFail, `pushizo/${QUEUE}/${jobId}`),
      otherQueue: await click('alice', ActionId.JobFail, `pushizo/nope/${jobId}`),
      revokeOnBullmq: await click('alice', ActionId.JobRevoke, `pushizo//${jobId}`),
      failOnCelery: await click('alice', ActionId.JobFail, 'zeus/celery/abc'),
      notATaskId: await click('alice', ActionId.JobRevoke, 'zeus//a;b'),
      flagAsId: await click('alice', ActionId.JobRevoke, 'zeus//--terminate'),
      unknownKind: await click('alice', 'queue_ops.job.explode', `pushizo/${QUEUE}/${jobId}`),
    };
    expect(answers.viewer).toContain('You need the `operator` role');
    expect(answers.otherQueue).toContain('nope');
    expect(answers.revokeOnBullmq).toContain('pushizo');
    expect(answers.failOnCelery).toContain('zeus');
    expect(answers.notATaskId).toContain('a;b');
    for (const answer of Object.values(answers)) {
      expect(answer).toContain('"response_type":"ephemeral"');
      expect(answer).not.toContain('device-token-secret');
      expect(answer).not.toMatch(/\bat .+\.(ts|js):\d+/);
    }
    expect((await ops.store.listRequests()).length).toBe(before);
    const denials = (await ops.audit.recent(50)).filter((e) => e.action === 'denied');
    expect(denials.map((e) => e.actorId)).toEqual(['U0ZED']);
  });
});
