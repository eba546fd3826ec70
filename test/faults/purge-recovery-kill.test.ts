import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { messages } from '../../src/i18n/index.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import {
  type CliRun,
  jsonOf,
  killCliWhen,
  requestOf,
  runCli,
  runCliInProcess,
  tempDir,
} from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { archiveDirOf, twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { archivedLines, storedRequest } from './fault-fixture.js';

/** Two chunks of 10,000: the kill lands while the first is being deleted. */
const N = 20_000;

/** How many times Redis ran `command` (scripts' inner calls included) since the last RESETSTAT. */
async function calls(redis: Redis, command: string): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/**
 * The command line running an approved purge of a BullMQ wait list is SIGKILLed while it deletes
 * its first chunk: some of that chunk's jobs are gone from Redis, its row does not say so yet.
 * The next command line is a `status`.
 */
describe('a BullMQ purge whose process is SIGKILLed mid-chunk, then a read-only command line', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('qr');
  const wait = `${prefix}:events:wait`;
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let dbFile: string;
  let id: string;
  let leftAtKill: number;
  let status: CliRun;

  const chunkRows = () => {
    const db = new Database(dbFile, { readonly: true });
    try {
      return db
        .prepare('SELECT seq, deleted, purged FROM purge_chunks WHERE purge_id = ? ORDER BY seq')
        .all(id) as { seq: number; deleted: number; purged: number }[];
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    tmp = tempDir('recovery-kill');
    dbFile = join(tmp.dir, 'queue-ops.db');
    config = writeConfigFile(tmp.dir, twoAdminsPurgeConfig(tmp.dir, bullmqSystem('hs', redisUrl, prefix)));
    await seedRawBullmqJobs(redis, { prefix, queue: 'events', count: N });
    id = requestOf(
      await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'purge', 'hs/events']),
    ).id;
    const archive = join(archiveDirOf(tmp.dir), id);
    // Killed once a few batches of the first chunk are deleted (a chunk is 10,000 jobs, a delete 500).
    await killCliWhen(
      ['--config', config, '--user', 'U0ERIN', '--json', 'approve', id],
      async () => existsSync(archive) && (await redis.llen(wait)) <= N - 1000,
      'the first deletes',
    );
    leftAtKill = await redis.llen(wait);
    // The dead process's lease ran out long ago, as it has when someone looks after a crash.
    const db = new Database(dbFile);
    try {
      db.prepare('UPDATE approval_requests SET lease_until = ? WHERE id = ?').run(
        new Date(Date.now() - 3_600_000).toISOString(),
        id,
      );
    } finally {
      db.close();
    }
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it('is killed with a chunk partly deleted, its row not marked', () => {
    // What recovery has to do: a recorded chunk whose jobs are partly gone, its row not marked.
    const rows = chunkRows();
    const marked = rows.filter((r) => r.deleted).reduce((n, r) => n + r.purged, 0);
    expect(rows.some((r) => !r.deleted)).toBe(true);
    expect(N - leftAtKill, 'jobs deleted but not yet recorded as deleted').toBeGreaterThan(marked);
  });

  it('status answers first, with the queue as the kill left it', async () => {
    await redis.config('RESETSTAT');
    status = await runCli(['--config', config, '--user', 'U0BOB', '--json', 'status', 'hs']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const systems = (jsonOf(status).data as { systems: { queues: { name: string; waiting: number }[] }[] })
      .systems;
    // Answered before recovery deleted anything more: the queue as the kill left it.
    expect(systems[0]!.queues.find((q) => q.name === 'events')?.waiting).toBe(leftAtKill);
  }, 120_000);

  it('recovery then says so in one line', () => {
    const t = messages('en').cli;
    const said = status.stderr.split('\n').filter((line) => line.startsWith('queue-ops:'));
    expect(said).toEqual([t.finishingAfter('status', 'purge', id, 'hs/events')]);
  });

  it('recovery finishes the purge: every job once, in the archive, none left queued', async () => {
    expect(await redis.llen(wait)).toBe(0);
    const archived = (await archivedLines<{ id: string }>(join(archiveDirOf(tmp.dir), id))).map((l) => l.id);
    expect(archived).toHaveLength(N);
    expect(new Set(archived).size).toBe(N);
  });

  it('recovery re-deletes with no LREM', async () => {
    // The jobs the killed run had deleted were not searched for in the list: no LREM at all
    // (it was one per job, each scanning the whole wait list).
    expect(await calls(redis, 'lrem')).toBe(0);
  });

  it('recovery settles the request done, with no "interrupted" error beside it', () => {
    expect(storedRequest(tmp.dir, id)).toMatchObject({
      status: 'done',
      error: null,
      result: { purged: N, archived: N, purgeId: id },
    });
    expect(status.stderr).not.toContain('may have run');
  });
});
