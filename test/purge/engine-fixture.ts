import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createArchiveDir } from '../../src/archive/archive.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { PurgeRecord, PurgeStore } from '../../src/store/store.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { tempDir } from '../helpers/cli-run.js';
import { type FixtureLife, setUpPer } from '../helpers/hooks.js';
import { testRedisUrl } from '../helpers/test-redis.js';

export interface PurgeEngineFixture {
  redisUrl: string;
  /** A fresh BullMQ prefix per test (or per describe). */
  prefix: string;
  /** A plain connection to seed and inspect with. */
  redis: Redis;
  tmp: ReturnType<typeof tempDir>;
  /** A migrated SQLite store in `tmp`. */
  store: SqliteStore;
}

/**
 * Registers the hooks of a test that drives the purge engine (`runPurge`) directly: a fresh
 * fixture for each test, or (`per: 'describe'`) one for all the steps of a describe.
 */
export function usePurgeEngine(stem: string, per: FixtureLife = 'test'): PurgeEngineFixture {
  const fixture = { redisUrl: testRedisUrl() } as PurgeEngineFixture;
  setUpPer(
    per,
    async () => {
      fixture.prefix = randomName(stem);
      fixture.redis = new Redis(fixture.redisUrl);
      fixture.tmp = tempDir(stem);
      fixture.store = createSqliteStore(join(fixture.tmp.dir, 'queue-ops.db'));
      await fixture.store.migrate();
    },
    async () => {
      await fixture.store.close();
      fixture.redis.disconnect();
      await deletePrefix(fixture.redisUrl, fixture.prefix);
      fixture.tmp.remove();
    },
  );
  return fixture;
}

/**
 * A purge of `total` waiting jobs of the fixture's BullMQ queue `q` (system `hs`), for `owner`, as
 * {@link archivingPurge} starts one under the fixture's temporary directory.
 */
export function queuePurge(fx: PurgeEngineFixture, total: number, owner = 'me'): Promise<PurgeRecord> {
  return archivingPurge(fx.store, fx.tmp.dir, {
    id: randomName('p'),
    system: 'hs',
    queue: 'q',
    total,
    owner,
  });
}

/**
 * A purge of `waiting` jobs (BullMQ unless `fields.backend` says) as the service starts one: its row in the store (archiving,
 * nothing archived yet) and its archive directory under `archiveRoot`.
 */
export async function archivingPurge(
  store: PurgeStore,
  archiveRoot: string,
  fields: Pick<PurgeRecord, 'id' | 'system' | 'queue' | 'total' | 'owner'> &
    Partial<Pick<PurgeRecord, 'backend' | 'states'>>,
): Promise<PurgeRecord> {
  const at = new Date().toISOString();
  const record: PurgeRecord = {
    backend: 'bullmq',
    states: ['waiting'],
    state: 'archiving',
    archivePath: join(archiveRoot, 'archive', fields.id),
    chunks: 0,
    archived: 0,
    purged: 0,
    heartbeatAt: at,
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
  await createArchiveDir(record.archivePath);
  await store.createPurge(record);
  return record;
}
