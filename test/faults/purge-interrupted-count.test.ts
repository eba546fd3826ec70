import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import {
  type CliRun,
  jsonOf,
  type RequestJson,
  requestOf,
  runCliInProcess,
  tempDir,
} from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { archiveDirOf, FaultyRedis, storedRequest, until } from './fault-fixture.js';

/** Two chunks of 10,000: Redis goes away while the first is being deleted. */
const N = 20_000;
const WAIT = 'hs:events:wait';

/**
 * Stops Redis between two commands, then SIGKILLs it: a script spinning in Lua holds every other
 * client's commands unread, so none of the purge's deletes is half answered when Redis dies (one
 * run but not answered would be gone without the purge knowing). Spins until killed.
 */
async function freezeThenKill(redis: FaultyRedis): Promise<void> {
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  admin.on('error', () => {});
  // No BUSY answers meanwhile: the other clients simply wait, as behind any long command.
  await admin.config('SET', 'busy-reply-threshold', '600000');
  admin.eval('while true do end', 0).catch(() => undefined);
  const probe = new Redis(redis.url, { maxRetriesPerRequest: 0, commandTimeout: 500 });
  probe.on('error', () => {});
  // Frozen once a PING goes unanswered.
  await until('Redis is frozen', async () => {
    try {
      await probe.ping();
      return false;
    } catch {
      return true;
    }
  });
  probe.disconnect();
  await redis.kill();
  admin.disconnect();
}

describe('a BullMQ purge whose Redis dies while a chunk is being deleted, finished later by another process', () => {
  let redis: FaultyRedis;
  let client: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let asked: RequestJson;
  let approved: CliRun;
  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  beforeAll(async () => {
    redis = await FaultyRedis.start();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    tmp = tempDir('interrupted-count');
    config = writeConfigFile(tmp.dir, twoAdminsPurgeConfig(tmp.dir, bullmqSystem('hs', redis.url, 'hs')));
    await seedRawBullmqJobs(client, { prefix: 'hs', queue: 'events', count: N });
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
    tmp?.remove();
  });

  it('tells the approver PurgeInterrupted', async () => {
    asked = requestOf(await as('U0BOB', 'purge', 'hs/events'));
    const approving = as('U0ERIN', 'approve', asked.id);
    // A few batches of the first chunk (10,000 jobs, deletes of 500) are gone, its row not marked.
    await until('the first deletes', async () => (await client.llen(WAIT)) <= N - 1000);
    await freezeThenKill(redis);
    approved = await approving;
    expect(approved.code, approved.stdout).toBe(1);
    expect(jsonOf(approved).error?.code).toBe('PurgeInterrupted');
  }, 120_000);

  it('PurgeInterrupted counts what is gone from Redis', async () => {
    await redis.restart();

    // Back from its append-only file: what the deletes removed stays removed.
    const gone = N - (await client.llen(WAIT));
    expect(gone).toBeGreaterThan(0);
    expect(gone).toBeLessThan(N);
    const told = requestOf(approved).result as { params: { done: number; total: number } };
    expect(told.params).toMatchObject({ done: gone, total: N });
    expect(jsonOf(approved).error?.message).toContain(
      `${gone.toLocaleString('en-US')} of ${N.toLocaleString('en-US')} jobs are archived and deleted`,
    );
  });

  it('once finished elsewhere, the request is done with no error beside it', async () => {
    // Another process (the next command line) finishes it from its archive.
    const next = await as('U0BOB', 'pending');
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(await client.llen(WAIT)).toBe(0);
    expect(storedRequest(tmp.dir, asked.id)).toEqual({
      status: 'done',
      error: null,
      result: {
        purged: N,
        archived: N,
        purgeId: asked.id,
        archivePath: join(archiveDirOf(tmp.dir), asked.id),
      },
    });
  }, 120_000);
});
