import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { errorGroupKey } from '../../src/backends/error-groups.js';
import { ActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import type { Message } from '../../src/blocks/message.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const HOUR = 3_600_000;
const SECRET = 'apns-token-never-shown';

/**
 * Failed jobs whose failure time the test controls: each job is taken by a real BullMQ worker
 * (`getNextJob`) and failed with BullMQ's own `moveToFailed`, with the clock BullMQ reads set to
 * `at` for that call only.
 */
async function failJobs(
  queue: Queue,
  worker: Worker,
  jobs: { name: string; error: string; at: number }[],
): Promise<string[]> {
  const added = await queue.addBulk(
    jobs.map((j, n) => ({ name: j.name, data: { n, token: SECRET }, opts: { attempts: 1 } })),
  );
  const ids: string[] = [];
  for (let i = 0; i < jobs.length; i++) {
    const token = `t${i}`;
    const job = await worker.getNextJob(token);
    if (!job) throw new Error('no job to fail');
    const spec = jobs[added.findIndex((a) => a.id === job.id)]!;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(spec.at);
    try {
      await job.moveToFailed(new Error(spec.error), token, false);
    } finally {
      clock.mockRestore();
    }
    ids.push(job.id!);
  }
  return ids;
}

describe('retry and purge of part of a BullMQ queue: --error, --name, --older-than, --newer-than, --keep', () => {
  const redisUrl = testRedisUrl();
  const queueName = 'dispatch-ios';
  const target = `pushizo/${queueName}`;
  let prefix: string;
  let queue: Queue;
  let worker: Worker;
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const now = Date.now();

  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  /** The params of the newest audit entry of `action` (the stored request's params are in it). */
  async function audited(action: string): Promise<{ outcome: string; params: Record<string, unknown> }> {
    const exported = await runCliInProcess(['--config', config, 'audit', 'export']);
    const entries = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { action: string; outcome: string; params: Record<string, unknown> })
      .filter((entry) => entry.action === action);
    return entries[entries.length - 1]!;
  }

  /** 12 failures: 6 old (3h ago) and 6 recent (10 min ago), two errors, two names. */
  async function seed() {
    const spec: { name: string; error: string; at: number }[] = [];
    for (let i = 0; i < 12; i++) {
      spec.push({
        name: i % 3 === 0 ? 'send-silent' : 'send',
        error: i % 2 === 0 ? 'APNs 429 TooManyRequests' : 'APNs 410 Unregistered',
        at: i < 6 ? now - 3 * HOUR + i * 1000 : now - 10 * 60_000 + i * 1000,
      });
    }
    await failJobs(queue, worker, spec);
    return spec;
  }

  beforeEach(async () => {
    prefix = randomName('qf');
    queue = new Queue(queueName, { connection: connectionFor(redisUrl), prefix });
    worker = new Worker(queueName, null, { connection: connectionFor(redisUrl), prefix, autorun: false });
    redis = new Redis(redisUrl);
    tmp = tempDir('filters');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: { ...TEST_ROLES, admin: ['U0BOB', 'U0ERIN'] },
      approvals: { cliSameOsUser: 'allow' },
      policies: { retry: { role: 'operator', approvals: 1 } },
      archive: { dir: `${tmp.dir}/archive` },
      systems: [bullmqSystem('pushizo', redisUrl, prefix)],
    });
  });

  afterEach(async () => {
    await worker?.close();
    await queue?.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it('retries only what the combined filters match, counts as BullMQ reports, and records the filter', async () => {
    const spec = await seed();
    const failed = await queue.getFailed(0, -1);
    expect(failed).toHaveLength(12);
    // What BullMQ itself says matches: error contains "429", name `send`, failed over an hour ago.
    const expected = failed.filter(
      (j) => j.failedReason.includes('429') && j.name === 'send' && (j.finishedOn ?? 0) < now - HOUR,
    );
    expect(expected.length).toBe(spec.filter((s, i) => i < 6 && s.name === 'send' && i % 2 === 0).length);

    const asked = await as(
      'U0ALICE',
      'retry',
      target,
      'all',
      '--error',
      '429',
      '--name',
      'send',
      '--older-than',
      '1h',
    );
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toContain(
      `Filter --error 429 --name send --older-than 1h: ${expected.length} of 12 failures match; all ${expected.length} go; ${12 - expected.length} not matching are left out.`,
    );
    expect(asked.stdout).not.toContain(SECRET);

    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    expect(requestOf(approved).result).toMatchObject({ retried: expected.length, skipped: 0 });
    expect(new Set(Object.keys(requestOf(approved).result!.ids as object))).toEqual(
      new Set(expected.map((j) => j.id)),
    );
    expect(await queue.getJobCounts('failed', 'wait')).toMatchObject({
      failed: 12 - expected.length,
      wait: expected.length,
    });

    expect(await audited('action.retry')).toMatchObject({
      outcome: 'done',
      params: {
        limit: 1000,
        filter: { error: '429', name: 'send', olderThan: '1h' },
        result: { retried: expected.length },
      },
    });
  }, 120_000);

  it('applies the cap to what matches: the newest matches go, the rest are counted as left', async () => {
    await seed();
    const asked = await as('U0ALICE', 'retry', target, 'all', '2', '--newer-than', '1h');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    expect(requestOf(asked).preview).toContain(
      'Filter --newer-than 1h: 6 of 12 failures match; the newest 2 go, 4 matching are left for another request; 6 not matching are left out.',
    );
    const newest = (await queue.getFailed(0, 1)).map((j) => j.id);
    const approved = await as('U0CAROL', 'approve', requestOf(asked).id);
    expect(new Set(Object.keys(requestOf(approved).result!.ids as object))).toEqual(new Set(newest));
  }, 120_000);

  it('a filtered purge takes only the matches, is archived, and its undo puts them back where they were', async () => {
    await seed();
    const before = await redis.zrange(`${prefix}:${queueName}:failed`, 0, -1, 'WITHSCORES');
    const matching = (await queue.getFailed(0, -1)).filter((j) => j.failedReason.includes('410'));
    const asked = await as('U0BOB', 'purge', target, 'failed', '--error', 'unregistered');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toContain(
      `Selection --error unregistered: ${matching.length} of 12 match; ${12 - matching.length} are left out.`,
    );
    const approved = await as('U0ERIN', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    expect(requestOf(approved).result).toMatchObject({ purged: matching.length, archived: matching.length });
    expect(await audited('action.purge')).toMatchObject({
      params: { states: ['failed'], filter: { error: 'unregistered' }, result: { purged: matching.length } },
    });
    const left = await queue.getFailed(0, -1);
    expect(left.map((j) => j.failedReason)).toEqual(
      Array(12 - matching.length).fill('APNs 429 TooManyRequests'),
    );
    for (const job of matching) expect(await queue.getJob(job.id!)).toBeUndefined();

    const undo = await as('U0BOB', 'undo', pending.id);
    expect(undo.code, undo.stdout + undo.stderr).toBe(0);
    const undone = await as('U0ERIN', 'approve', requestOf(undo).id);
    expect(requestOf(undone).result).toMatchObject({ restored: matching.length });
    expect(await redis.zrange(`${prefix}:${queueName}:failed`, 0, -1, 'WITHSCORES')).toEqual(before);
    expect((await queue.getJobCounts('failed')).failed).toBe(12);
  }, 120_000);

  it('--keep n deletes all but the newest n failures, archived and undoable', async () => {
    await seed();
    const newest = (await queue.getFailed(0, 2)).map((j) => j.id);
    const asked = await as('U0BOB', 'purge', target, 'failed', '--keep', '3');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    expect(requestOf(asked).preview).toContain('Selection --keep 3: 9 of 12 match; 3 are left out.');
    const approved = await as('U0ERIN', 'approve', requestOf(asked).id);
    expect(requestOf(approved).result).toMatchObject({ purged: 9 });
    expect((await queue.getFailed(0, -1)).map((j) => j.id)).toEqual(newest);

    const undo = await as('U0BOB', 'undo', requestOf(asked).id);
    const undone = await as('U0ERIN', 'approve', requestOf(undo).id);
    expect(requestOf(undone).result).toMatchObject({ restored: 9 });
    expect((await queue.getJobCounts('failed')).failed).toBe(12);
  }, 120_000);

  it('--keep with a filter keeps the newest n matches', async () => {
    await seed();
    const matching = (await queue.getFailed(0, -1)).filter((j) => j.name === 'send-silent');
    const asked = await as('U0BOB', 'purge', target, 'failed', '--name', 'send-silent', '--keep', '1');
    expect(requestOf(asked).preview).toContain(
      `Selection --name send-silent --keep 1: ${matching.length - 1} of 12 match;`,
    );
    const approved = await as('U0ERIN', 'approve', requestOf(asked).id);
    expect(requestOf(approved).result).toMatchObject({ purged: matching.length - 1 });
    const left = (await queue.getFailed(0, -1)).filter((j) => j.name === 'send-silent').map((j) => j.id);
    expect(left).toEqual([matching[0]!.id]);
  }, 120_000);

  it("dlq's error groups carry a Retry-this-group button whose value is ids only, and its click asks the filtered retry", async () => {
    await seed();
    const dlq = await as('U0ALICE', 'dlq', target);
    expect(dlq.code, dlq.stdout + dlq.stderr).toBe(0);
    const buttons = JSON.stringify(jsonOf(dlq).message.blocks).match(
      /"action_id":"queue_ops\.dlq\.retry_group[^"]*","value":"[^"]*"/g,
    );
    expect(buttons).toHaveLength(2);
    const key = errorGroupKey('APNs 410 Unregistered');
    const value = `${key}/${target}`;
    expect(buttons!.some((b) => b.endsWith(`"value":"${value}"`))).toBe(true);
    expect(validateMessage(jsonOf(dlq).message as Message)).toEqual([]);
    // The error text itself is in no button.
    expect(buttons!.join('')).not.toContain('Unregistered');
    const words = wordsForAction(ActionId.DlqRetryGroup, value)!;
    expect(words).toEqual(['retry', target, 'all', '--group', key]);

    const asked = await as('U0ALICE', ...words);
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toContain(
      'Filter --group "APNs 410 Unregistered": 6 of 12 failures match; all 6 go',
    );
    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(requestOf(approved).result).toMatchObject({ retried: 6 });
    expect(await audited('action.retry')).toMatchObject({
      params: { filter: { group: 'APNs 410 Unregistered' } },
    });
    expect((await queue.getFailed(0, -1)).map((j) => j.failedReason)).toEqual(
      Array(6).fill('APNs 429 TooManyRequests'),
    );
    // The same guards as typing it: a viewer may not ask.
    const viewer = await as('U0NOBODY', ...words);
    expect(viewer.code).not.toBe(0);
    expect(jsonOf(viewer).error?.code).toBe('Forbidden');
    // A group no longer shown says so in one line.
    const gone = await as('U0ALICE', 'retry', target, 'all', '--group', 'abcdefabcdef');
    expect(jsonOf(gone).error?.message).toBe(
      `That error group is no longer among the newest failures of ${target}; run \`dlq ${target}\` again.`,
    );
  }, 120_000);

  it('answers bad input in one line naming what is valid', async () => {
    await seed();
    const cases: [string[], string][] = [
      [
        ['retry', target, 'all', '--older-than', 'banana'],
        '`banana` is not a duration for `--older-than`. Valid: a duration such as 30m, 2h or 7d.',
      ],
      [
        ['purge', target, 'failed', '--keep', '-1'],
        '`-1` is not a number of failures to keep. Valid: a whole number from 0 to 10,000,000.',
      ],
      [
        ['purge', target, 'failed', '--keep', 'x'],
        '`x` is not a number of failures to keep. Valid: a whole number from 0 to 10,000,000.',
      ],
      [
        ['retry', target, 'all', '--colour', 'red'],
        '`--colour` is not a flag of this command. Valid: --error, --name, --older-than, --newer-than.',
      ],
      [
        ['purge', target, 'waiting', '--keep', '3'],
        '`--keep` keeps the newest failed jobs: it goes with `failed`. Valid: purge <system>/<queue> failed --keep <n>.',
      ],
      [
        ['retry', target, 'all', '--older-than', '1h', '--newer-than', '1h'],
        '`--older-than 1h` and `--newer-than 1h` leave no time between them. Valid: --older-than shorter than --newer-than, e.g. `--older-than 1h --newer-than 1d`.',
      ],
    ];
    for (const [words, message] of cases) {
      const run = await as('U0BOB', ...words);
      expect(run.code, words.join(' ')).toBe(2);
      expect(jsonOf(run).error?.message, words.join(' ')).toBe(message);
    }
    const none = await as('U0ALICE', 'retry', target, 'all', '--name', 'nope');
    expect(jsonOf(none).error?.code).toBe('NothingToRetry');
    expect((await queue.getJobCounts('failed')).failed).toBe(12);
  }, 120_000);
});
