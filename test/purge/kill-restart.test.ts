import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readChunk } from '../../src/archive/archive.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, killCliWhen, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/** Jobs in the killed purge; PURGE_KILL_N=200000 runs the full size. */
const N = Number(process.env.PURGE_KILL_N ?? 50_000);

describe('a purge killed with SIGKILL halfway', () => {
  const redisUrl = testRedisUrl();
  let prefix: string;
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const archiveDir = () => join(tmp.dir, 'archive');

  beforeEach(async () => {
    prefix = randomName('qk');
    redis = new Redis(redisUrl);
    tmp = tempDir('kill');
    config = writeConfigFile(tmp.dir, {
      ...twoAdminsPurgeConfig(tmp.dir, bullmqSystem('hs', redisUrl, prefix)),
      // The default, refusing an approval typed by the OS user who asked: the approver here is a
      // process of its own, not the in-process asker (OS user `tester`).
      approvals: {},
    });
  });

  afterEach(async () => {
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it(`is finished from its archive by the next command-line run: Redis + archive hold the ${N.toLocaleString('en-US')} jobs once each`, async () => {
    await seedRawBullmqJobs(redis, { prefix, queue: 'events', count: N });
    const asked = requestOf(
      await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'purge', 'hs/events']),
    );
    const archive = join(archiveDir(), asked.id);

    // The approver's command line runs the purge; it is killed once two chunks are on disk and the
    // first deletes are done. Chunks are written ahead of their deletes (which wait for the chunk's
    // row in the store), so two files alone can mean nothing deleted yet on a loaded machine.
    await killCliWhen(
      ['--config', config, '--user', 'U0ERIN', '--json', 'approve', asked.id],
      async () =>
        existsSync(archive) &&
        readdirSync(archive).filter((f) => f.startsWith('chunk-')).length >= 2 &&
        (await redis.llen(`${prefix}:events:wait`)) < N,
      'the purge writing two chunks and deleting from the first',
    );

    const db = new Database(join(tmp.dir, 'queue-ops.db'), { readonly: true });
    const row = db.prepare('SELECT state, owner FROM purges WHERE id = ?').get(asked.id) as { state: string };
    db.close();
    expect(row.state).toBe('archiving');
    const leftAtKill = await redis.llen(`${prefix}:events:wait`);
    expect(leftAtKill).toBeGreaterThan(0);
    expect(leftAtKill).toBeLessThan(N);

    // The next command line that opens the store finishes it.
    const next = await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'pending']);
    expect(next.code, next.stdout + next.stderr).toBe(0);

    const inRedis = await redis.lrange(`${prefix}:events:wait`, 0, -1);
    const archived: string[] = [];
    for (const file of readdirSync(archive)
      .filter((f) => f.startsWith('chunk-'))
      .sort())
      for (const line of await readChunk(archive, file))
        archived.push((JSON.parse(line) as { id: string }).id);
    const all = [...inRedis, ...archived];
    expect(all).toHaveLength(N);
    expect(new Set(all).size).toBe(N);
    expect(inRedis).toHaveLength(0);

    const audit = jsonOf(
      await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'audit', '50']),
    );
    const entries = (
      audit.data as { entries: { action: string; outcome: string; params?: Record<string, unknown> }[] }
    ).entries;
    expect(entries.find((e) => e.action === 'purge.recovered')).toMatchObject({
      outcome: 'finished',
      params: expect.objectContaining({ request: asked.id, purged: N, archived: N }),
    });
    const after = new Database(join(tmp.dir, 'queue-ops.db'), { readonly: true });
    const stored = after
      .prepare('SELECT status, result FROM approval_requests WHERE id = ?')
      .get(asked.id) as {
      status: string;
      result: string;
    };
    after.close();
    expect(stored.status).toBe('done');
    expect(JSON.parse(stored.result)).toMatchObject({ purged: N, archived: N, purgeId: asked.id });
  }, 180_000);
});
