import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import {
  jsonOf,
  ONE_SHELL_TWO_PEOPLE,
  requestOf,
  runCliInProcess,
  tempDir,
  writeConfig,
} from '../actions/cli-helpers.js';
import {
  archivedLines,
  auditEntries,
  chunksWritten,
  expectOneLineNaming,
  FaultyRedis,
  storedRequest,
  until,
} from './fault-fixture.js';

/** Jobs purged; FAULT_PURGE_N=200000 runs the full size (minutes on a loaded 2-core machine). */
const N = Number(process.env.FAULT_PURGE_N ?? 50_000);

describe(`a BullMQ purge of ${N.toLocaleString('en-US')} jobs whose Redis is paused, then killed, midway`, () => {
  let redis: FaultyRedis;
  let client: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let ids: string[];
  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  beforeAll(async () => {
    redis = await FaultyRedis.start();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    tmp = tempDir('fault-purge-bullmq');
    config = writeConfig(tmp.dir, `sqlite:${tmp.dir}/queue-ops.db`, [
      'roles:',
      '  admin: [U0BOB, U0ERIN]',
      ...ONE_SHELL_TWO_PEOPLE,
      'archive:',
      `  dir: ${JSON.stringify(join(tmp.dir, 'archive'))}`,
      'systems:',
      '  - name: hs',
      '    type: bullmq',
      `    redis: ${JSON.stringify(redis.url)}`,
      '    prefix: hs',
    ]);
    await seedRawBullmqJobs(client, { prefix: 'hs', queue: 'events', count: N, batch: 10_000 });
    ids = await client.lrange('hs:events:wait', 0, -1);
    expect(ids).toHaveLength(N);
  }, 120_000);

  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
    tmp?.remove();
  });

  it('waits out a 10 s pause, is stopped by the kill with one line naming hs, is finished once Redis is back, and undo restores every job once', async () => {
    const asked = requestOf(await as('U0BOB', 'purge', 'hs/events'));
    expect(asked.preview).toContain(`${N.toLocaleString('en-US')} jobs will be archived`);
    const archive = join(tmp.dir, 'archive', asked.id);

    // The approver's command runs the purge; Redis hangs for 10 s after two chunks, and is killed
    // after two more.
    const approving = as('U0ERIN', 'approve', asked.id);
    await chunksWritten(archive, 2);
    redis.pause();
    await new Promise((r) => setTimeout(r, 10_000));
    redis.resume();
    // Killed once a chunk is deleted, so that the kill finds some jobs gone and some still queued.
    await until('a chunk is deleted', async () => (await client.llen('hs:events:wait')) <= N - 10_000);
    const killedAt = Date.now();
    await redis.kill();
    const approved = await approving;
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    expect(approved.code, approved.stdout).toBe(1);
    expect(jsonOf(approved).error?.code).toBe('PurgeInterrupted');
    const line = expectOneLineNaming(approved, 'hs');
    expect(line).toMatch(
      /^Redis for `hs` stopped answering during the purge of `hs\/events` \(connection (lost|refused)\): [\d,]+ of [\d,]+ jobs are archived and deleted, the rest are still queued\. The purge goes on from its archive once Redis answers again/,
    );
    expect(requestOf(approved).status).toBe('failed');

    // Started again from its append-only file: what it acknowledged is there, what was deleted
    // stays deleted. The next command line that opens the store finishes the purge.
    await redis.restart();
    const leftAtRestart = await client.llen('hs:events:wait');
    expect(leftAtRestart).toBeGreaterThan(0);
    expect(leftAtRestart).toBeLessThan(N);
    const next = await as('U0BOB', 'pending');
    expect(next.code, next.stdout + next.stderr).toBe(0);

    // Every job once: still queued or in the archive, never both, never neither.
    const left = await client.lrange('hs:events:wait', 0, -1);
    const archived = (await archivedLines<{ id: string }>(archive)).map((l) => l.id);
    expect(left).toEqual([]);
    expect(archived).toHaveLength(N);
    expect(new Set(archived).size).toBe(N);
    expect(new Set([...archived, ...ids]).size).toBe(N);

    // The trail says what happened: the approved purge failed on hs's Redis, and was finished.
    const audit = await auditEntries(config);
    const purgeEntries = audit.filter((e) => e.target === 'hs/events' && /^(action|purge)\./.test(e.action));
    expect(purgeEntries.map((e) => [e.actorId, e.action, e.outcome, e.error ?? null])).toEqual([
      ['U0ERIN', 'action.purge', 'failed', 'PurgeInterrupted'],
      ['queue-ops', 'purge.recovered', 'finished', null],
    ]);
    expect(purgeEntries[1]!.params).toMatchObject({ request: asked.id, purged: N, archived: N });
    expect(storedRequest(tmp.dir, asked.id)).toMatchObject({
      status: 'done',
      result: { purged: N, archived: N, purgeId: asked.id },
    });

    const undo = requestOf(await as('U0BOB', 'undo', asked.id));
    const undone = await as('U0ERIN', 'approve', undo.id);
    expect(undone.code, undone.stdout).toBe(0);
    expect(requestOf(undone)).toMatchObject({ status: 'done', result: { restored: N, purgeId: asked.id } });
    expect(await client.lrange('hs:events:wait', 0, -1)).toEqual(ids);
  }, 300_000);
});
