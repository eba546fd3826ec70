import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { ActionId } from '../../src/blocks/action-ids.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { RequestStatus } from '../../src/store/store.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { celerySystem, configYaml } from '../helpers/config-file.js';
import {
  buttonClick,
  captureResponses,
  type Harness,
  randomId,
  slackAround,
} from '../transports/slack/harness.js';

/** Long enough for three presses and an approval while it runs; it then ends by itself. */
const SLEEP_SECONDS = 10;

const people = {
  alice: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0TEAM' },
  bob: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
  zed: { id: 'U0ZED', username: 'zed', name: 'zed', team_id: 'T0TEAM' },
};
type Who = keyof typeof people;

/**
 * The job view's Revoke button, through the real Slack listeners and the real dispatcher, on a
 * long task a real Celery 5 worker runs: pressed twice by one operator and once by another (one
 * request waits), approved (the worker says it revoked it, once), pressed again after the task
 * ended (one line, nothing asked), and forged.
 */
describe('the job view’s Revoke button on a running Celery task, pressed twice and forged', () => {
  let redis: PrivateRedis;
  let client: Redis;
  let worker: CeleryWorker;
  let ops: QueueOps;
  let slack: Harness;
  let taskId: string;
  const dir = mkdtempSync(join(tmpdir(), 'qo-job-buttons-celery-'));

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    redis = await startPrivateRedis();
    client = new Redis(redis.url);
    worker = await startCeleryWorker({
      brokerUrl: redis.url,
      queues: ['celery'],
      name: 'revoke',
      concurrency: 1,
    });
    [taskId] = (
      await publishCelery({ brokerUrl: redis.url }, [
        { task: 'tasks.sleepy', args: [SLEEP_SECONDS], queue: 'celery' },
      ])
    ).ids as [string];
    const config = parseConfig(
      configYaml({
        systems: [celerySystem('zeus', redis.url, { queues: ['celery'] })],
        slack: { allowedChannels: ['C0INCIDENT'] },
        store: `sqlite:${join(dir, 'store.db')}`,
        roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'] },
        policies: { revoke: { role: 'operator', approvals: 1 } },
        rateLimit: { perUserPerMinute: 1000 },
      }),
      {},
    );
    ops = await createQueueOps({ config, env: {}, logger: silentLogger() });
    slack = slackAround(ops.dispatcher, { logger: silentLogger() });
  }, 90_000);

  afterAll(async () => {
    await ops?.close();
    await worker?.stop();
    client?.disconnect();
    await redis?.stop();
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

  const pendingRevokes = async () => (await ops.approvals.pending()).filter((r) => r.action === 'revoke');

  it('pressed twice and by a second operator, one request waits; approved, the worker revokes it once; pressed after it ended, one line and nothing asked', async () => {
    const ref = `zeus//${taskId}`;
    await expect
      .poll(async () => click('alice', ActionId.JobRefresh, ref), { timeout: 20_000, interval: 200 })
      .toContain(ActionId.JobRevoke);
    const view = await click('alice', ActionId.JobRefresh, ref);
    expect(view).toContain(`"value":"${ref}"`);
    expect(view).toContain(worker.name);

    const first = await click('alice', ActionId.JobRevoke, ref);
    const [request] = await pendingRevokes();
    expect(request?.target).toBe(`zeus/${taskId}`);
    expect(first).toContain(request!.id);
    expect(first).toContain(worker.name);

    const again = await click('alice', ActionId.JobRevoke, ref);
    const byBob = await click('bob', ActionId.JobRevoke, ref);
    for (const answer of [again, byBob]) {
      expect(answer).toContain(request!.id);
      expect(answer).toContain('already');
    }
    expect((await pendingRevokes()).map((r) => r.id)).toEqual([request!.id]);

    // Bob approves the one request: the one worker answers that it revoked the task, once.
    await click('bob', ActionId.Approve, request!.id);
    const done = await ops.approvals.get(request!.id);
    expect(done?.status).toBe(RequestStatus.Done);
    const answers = (done?.result?.answers ?? []) as { worker: string; answer: string }[];
    expect(answers).toHaveLength(1);
    expect(answers[0]!.worker).toBe(worker.name);
    expect(answers[0]!.answer).toMatch(/revoked/i);
    expect(answers[0]!.answer).toContain(taskId);
    expect(worker.output().match(new RegExp(`flagged as revoked: ${taskId}`, 'g'))).toHaveLength(1);

    // The task ends (its result is stored); the old view's Revoke pressed again: one line.
    await expect
      .poll(() => client.exists(`celery-task-meta-${taskId}`), {
        timeout: SLEEP_SECONDS * 3000,
        interval: 200,
      })
      .toBe(1);
    const before = (await ops.store.listRequests()).length;
    const late = await click('alice', ActionId.JobRevoke, ref);
    expect(late).toContain('"response_type":"ephemeral"');
    expect(late).toContain(taskId);
    expect(late).toMatch(/is no longer running; nothing was revoked and no request was made/);
    expect(late).not.toContain(ActionId.Approve);
    expect(await pendingRevokes()).toEqual([]);
    expect((await ops.store.listRequests()).length).toBe(before);
  }, 90_000);

  it('forged presses change nothing: each is one line and no request is made', async () => {
    const before = (await ops.store.listRequests()).length;
    const answers = {
      viewer: await click('zed', ActionId.JobRevoke, `zeus//${taskId}`),
      otherSystem: await click('alice', ActionId.JobRevoke, `nope//${taskId}`),
      flagAsId: await click('alice', ActionId.JobRevoke, 'zeus//--terminate'),
      signalAsId: await click('alice', ActionId.JobRevoke, 'zeus//--signal=KILL'),
      twoWords: await click('alice', ActionId.JobRevoke, `zeus//${taskId} --terminate`),
      unknownTask: await click('alice', ActionId.JobRevoke, 'zeus//d0c0ffee-0000-4000-8000-000000000000'),
    };
    expect(answers.viewer).toContain('You need the `operator` role');
    expect(answers.otherSystem).toContain('nope');
    expect(answers.unknownTask).toContain('nothing was revoked');
    for (const answer of Object.values(answers)) {
      expect(answer).toContain('"response_type":"ephemeral"');
      expect(answer).not.toMatch(/\bat .+\.(ts|js):\d+/);
      expect(answer).not.toContain('Traceback');
    }
    expect((await ops.store.listRequests()).length).toBe(before);
    const denials = (await ops.audit.recent(50)).filter((e) => e.action === 'denied');
    expect(denials.map((e) => e.actorId)).toEqual(['U0ZED']);
  }, 60_000);
});
