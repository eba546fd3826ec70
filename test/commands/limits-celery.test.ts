import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPidboxClient } from '../../src/backends/celery/pidbox.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { runCli as runCliHere } from '../../src/transports/cli/run.js';
import { fakeSlack } from '../escalation/fake-slack.js';
import { type CeleryWorker, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, type RequestJson, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';

const SLACK = 'https://slack.celery-limits.test';

/**
 * `rate-limit <system> <task> <rate|off>` against two real Celery workers on a Redis of its own:
 * the rate reaches each worker (read back with `inspect registered` by a client of the test's
 * own), the audit keeps what each had before, `off` puts exactly that back, and a `--for` is
 * lifted by the monitor.
 */
describe('Celery task rate limits from the command line, with real workers', () => {
  let redis: PrivateRedis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const workers: CeleryWorker[] = [];
  let probe: Redis;
  let inspector: ReturnType<typeof createPidboxClient>;

  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);
  const setAndApprove = async (
    ...words: string[]
  ): Promise<{ asked: RequestJson; done: RequestJson; shown: string }> => {
    const asked = await as('U0ALICE', ...words);
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const request = requestOf(asked);
    expect(request.status).toBe('pending');
    const approved = await as('U0CAROL', 'approve', request.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    return {
      asked: request,
      done: requestOf(approved),
      shown: JSON.stringify(jsonOf(approved).message.blocks),
    };
  };
  /** `celery inspect registered --taskinfoitems rate_limit`, asked by the test itself: worker → entry. */
  const registered = async (task: string) => {
    const result = await inspector.broadcast(
      'registered',
      { taskinfoitems: ['rate_limit'] },
      { timeoutMs: 3000 },
    );
    return Object.fromEntries(
      result.replies.map(({ worker, reply }) => [
        worker,
        (reply as string[]).find((entry) => entry === task || entry.startsWith(`${task} `)),
      ]),
    );
  };

  beforeAll(async () => {
    redis = await startPrivateRedis();
    probe = new Redis(redis.url);
    inspector = createPidboxClient({
      client: probe,
      createBlockingClient: () => new Redis(redis.url),
      layout: {
        globalKeyprefix: '',
        prioritySteps: [0, 3, 6, 9],
        separator: '\x06\x16',
        fanoutPrefix: true,
        db: 0,
      },
    });
    const [a, b] = await Promise.all([
      startCeleryWorker({ brokerUrl: redis.url, queues: ['celery'], name: 'zeus-a' }),
      startCeleryWorker({ brokerUrl: redis.url, queues: ['celery'], name: 'zeus-b' }),
    ]);
    workers.push(a, b);
    tmp = tempDir('limits-celery');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      approvals: { cliSameOsUser: 'allow' },
      slack: { incidentChannel: 'C0INCIDENT' },
      systems: [celerySystem('zeus', redis.url, { queues: ['celery'], inspectTimeoutMs: 3000 })],
    });
  }, 90_000);

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await inspector?.close();
    probe?.disconnect();
    await redis?.stop();
    nock.cleanAll();
    nock.enableNetConnect();
    tmp?.remove();
  });

  it('the rate reaches every worker, the answer lists each reply, and off puts back exactly what each had', async () => {
    const [a, b] = workers as [CeleryWorker, CeleryWorker];
    // One worker already runs tasks.add at 5/m (as a rate set in the app's code would): queue-ops
    // must put that back, not "no limit", when its own limit is lifted.
    await inspector.broadcast(
      'rate_limit',
      { task_name: 'tasks.add', rate_limit: '5/m' },
      { timeoutMs: 3000, destination: [b.name] },
    );
    expect(await registered('tasks.add')).toEqual({
      [a.name]: 'tasks.add',
      [b.name]: 'tasks.add [rate_limit=5/m]',
    });

    const { asked, done, shown } = await setAndApprove('rate-limit', 'zeus', 'tasks.add', '100/m');
    expect(asked).toMatchObject({ action: 'rate-limit', target: 'zeus/tasks.add', requiredApprovals: 1 });
    // The preview names the workers that will get it, and what each has now.
    expect(asked.preview).toBe(
      `rate-limit task tasks.add on zeus to 100/m, sent to 2 workers: ${a.name} (now none), ${b.name} (now 5/m)` +
        '; each worker keeps to it on its own, so up to 200/m in all.',
    );
    expect(done.status).toBe('done');
    expect(done.result).toMatchObject({
      kind: 'rate-limit',
      value: '100/m',
      previous: { workers: { [a.name]: null, [b.name]: '5/m' } },
      answers: [
        { worker: a.name, before: null, after: '100/m', answer: 'new rate limit set successfully', ok: true },
        {
          worker: b.name,
          before: '5/m',
          after: '100/m',
          answer: 'new rate limit set successfully',
          ok: true,
        },
      ],
    });
    expect(shown).toContain(`${a.name}: new rate limit set successfully → 100/m`);
    expect(await registered('tasks.add')).toEqual({
      [a.name]: 'tasks.add [rate_limit=100/m]',
      [b.name]: 'tasks.add [rate_limit=100/m]',
    });

    // The audit entry keeps each worker's previous rate.
    const audit = (
      jsonOf(await as('U0BOB', 'audit')).data as {
        entries: { action: string; params?: Record<string, unknown> }[];
      }
    ).entries;
    const entry = audit.find((e) => e.action === 'action.rate-limit');
    expect(entry?.params?.result).toMatchObject({
      previous: { workers: { [a.name]: null, [b.name]: '5/m' } },
    });

    // status shows the limit queue-ops set (the store's record: Celery keeps rates in worker memory).
    const status = jsonOf(await as('U0DAVE', 'status', 'zeus'));
    const system = (status.data as { systems: { limits: unknown[] }[] }).systems[0]!;
    expect(system.limits).toEqual([
      { target: 'tasks.add', kind: 'rate-limit', value: '100/m', setBy: 'U0ALICE', expiresAt: null },
    ]);
    expect(JSON.stringify(status.message.blocks)).toContain('Limits: task `tasks.add` 100/m');

    // A second limit replaces the first; off goes back to before both.
    await setAndApprove('rate-limit', 'zeus', 'tasks.add', '10/s');
    const off = await setAndApprove('rate-limit', 'zeus', 'tasks.add', 'off');
    expect(off.asked.preview).toContain(
      `back to what each had before queue-ops: ${a.name} none, ${b.name} 5/m`,
    );
    expect(off.done.result?.answers).toMatchObject([
      { worker: a.name, before: '10/s', after: null, answer: 'rate limit disabled successfully' },
      { worker: b.name, before: '10/s', after: '5/m', answer: 'new rate limit set successfully' },
    ]);
    expect(await registered('tasks.add')).toEqual({
      [a.name]: 'tasks.add',
      [b.name]: 'tasks.add [rate_limit=5/m]',
    });
    expect(
      (jsonOf(await as('U0DAVE', 'status', 'zeus')).data as { systems: { limits: unknown[] }[] }).systems[0]!
        .limits,
    ).toEqual([]);
  }, 120_000);

  it('a --for rate limit is lifted by the monitor and the alert channel is told', async () => {
    const slack = fakeSlack(SLACK);
    nock.enableNetConnect('127.0.0.1');
    const { done } = await setAndApprove('rate-limit', 'zeus', 'tasks.sleepy', '2/s', '--for', '2s');
    const expiresAt = Date.parse(String(done.result?.expiresAt));
    expect(Object.values(await registered('tasks.sleepy'))).toEqual([
      'tasks.sleepy [rate_limit=2/s]',
      'tasks.sleepy [rate_limit=2/s]',
    ]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 100)));
    const code = await runCliHere({
      argv: ['--config', config, 'monitor', '--once', '--json'],
      env: { SLACK_BOT_TOKEN: 'xoxb-limits', SLACK_API_URL: `${SLACK}/api` },
      cwd: tmp.dir,
      stdout: () => {},
      stderr: () => {},
      osUser: 'cron',
    });
    expect(code).toBe(0);
    expect(Object.values(await registered('tasks.sleepy'))).toEqual(['tasks.sleepy', 'tasks.sleepy']);
    const notice = slack.delivered().find((c) => /ran out/.test(c.body.text ?? ''));
    expect(notice?.body).toMatchObject({
      channel: 'C0INCIDENT',
      text: 'The rate limit 2/s of zeus/tasks.sleepy ran out and was lifted: back to none (set by U0ALICE).',
    });
  }, 120_000);

  it('refuses bad input in one line naming what is valid', async () => {
    const line = async (...words: string[]) => {
      const run = await as('U0ALICE', ...words);
      expect(run.code).not.toBe(0);
      return jsonOf(run).message.text;
    };
    const valid =
      'Valid: tasks per second, minute or hour, as Celery writes them: `10/s`, `100/m`, `500/h`; or `off`.';
    expect(await line('rate-limit', 'zeus', 'tasks.add', '100/parsec')).toBe(
      `\`100/parsec\` is not a Celery rate. ${valid}`,
    );
    expect(await line('rate-limit', 'zeus', '100/parsec')).toBe(
      `\`100/parsec\` is not a Celery rate. ${valid}`,
    );
    expect(await line('rate-limit', 'zeus', 'tasks.nope', '10/m')).toMatch(
      /^No worker of `zeus` has task `tasks\.nope` registered\. Valid: .*`tasks\.add`.*\.$/,
    );
    expect(await line('concurrency', 'zeus', '4')).toMatch(
      /^`zeus` \(celery\) has no global concurrency per queue\. Valid: /,
    );
    expect(await line('rate-limit', 'zeus', 'tasks.add', 'off', '--for', '1h')).toMatch(
      /^`--for` lifts a limit after a while; `off` lifts it now\. Usage: /,
    );
  }, 60_000);
});
