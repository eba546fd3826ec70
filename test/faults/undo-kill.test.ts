import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undoMarkerKey } from '../../src/backends/undo-marker.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { messages } from '../../src/i18n/index.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, killCliWhen, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { purgeAloneConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { storedRequest } from './fault-fixture.js';

const N = 20_000;
const redisUrl = testRedisUrl();

/**
 * An undo (restoring a purge from its archive) whose command line, a real `bin/queue-ops.js`
 * process, is SIGKILLed halfway through putting the jobs back. The next command line finishes it
 * from where the marker in Redis says it stopped: every job back exactly once, in its place and
 * order, the undo request settled, the audit saying what happened.
 */
describe('an undo killed with SIGKILL halfway', () => {
  const prefix = randomName('qu');
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let purgeId: string;
  let leftAtKill: number;
  let ids: string[];
  const as = (...words: string[]) =>
    runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', ...words]);
  const purgeRow = () => {
    const db = new Database(join(tmp.dir, 'queue-ops.db'), { readonly: true });
    try {
      return db.prepare('SELECT state, owner FROM purges WHERE id = ?').get(purgeId) as {
        state: string;
        owner: string;
      };
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    tmp = tempDir('undokill');
    config = writeConfigFile(tmp.dir, purgeAloneConfig(tmp.dir, bullmqSystem('hs', redisUrl, prefix)));
    await seedRawBullmqJobs(redis, { prefix, queue: 'events', count: N });
    ids = await redis.lrange(`${prefix}:events:wait`, 0, -1);
    const purged = requestOf(await as('purge', 'hs/events'));
    expect(purged.status).toBe('done');
    purgeId = purged.id;
    expect(await redis.llen(`${prefix}:events:wait`)).toBe(0);

    // Killed once the first batches are back in Redis and before the last.
    await killCliWhen(
      ['--config', config, '--user', 'U0BOB', '--json', 'undo', purgeId],
      async () => (await redis.llen(`${prefix}:events:wait`)) > 0,
      'the undo restoring a job',
    );
    leftAtKill = await redis.llen(`${prefix}:events:wait`);
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it('leaves the purge marked as being undone by the dead process, part of the jobs back', () => {
    expect(leftAtKill).toBeGreaterThan(0);
    expect(leftAtKill).toBeLessThan(N);
    expect(purgeRow().state).toBe('undoing');
  });

  it('is finished by the next command line from where it stopped: every job back once, in order', async () => {
    const next = await as('pending');
    expect(next.code, next.stdout).toBe(0);
    expect(purgeRow().state).toBe('undone');
    // Exactly what was purged, in the order workers would have taken it: nothing twice, nothing missing.
    expect(await redis.lrange(`${prefix}:events:wait`, 0, -1)).toEqual(ids);
    expect(await redis.hget(`${prefix}:events:${ids[0]}`, 'name')).toBeTruthy();

    const audit = jsonOf(await as('audit', '20'));
    const entries = (
      audit.data as {
        entries: { action: string; outcome: string; error?: string; params?: Record<string, unknown> }[];
      }
    ).entries;
    const recovered = entries.filter((e) => e.action === 'undo.recovered');
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({
      outcome: 'finished',
      params: expect.objectContaining({ purge: purgeId, restored: N }),
    });
    const undoRequest = String(recovered[0]!.params!.request);
    expect(undoRequest).toMatch(/^r-/);
    expect(storedRequest(tmp.dir, undoRequest)).toMatchObject({
      status: 'done',
      result: { restored: N, purgeId },
    });

    // Asked again, it is refused as already undone; a second start finds nothing more to recover.
    const again = await as('undo', purgeId);
    expect(again.code).toBe(1);
    expect(jsonOf(again).message.text).toContain(messages('en').purge.undoAlready(undoRequest));
    expect(await redis.llen(`${prefix}:events:wait`)).toBe(N);
    await as('pending');
    const later = jsonOf(await as('audit', '20'));
    expect(
      (later.data as { entries: { action: string }[] }).entries.filter((e) => e.action === 'undo.recovered'),
    ).toHaveLength(1);
    expect(jsonOf(await as('audit', 'verify')).ok).toBe(true);
    // Done: the marker kept in Redis for a resume is gone with it.
    expect(await redis.exists(undoMarkerKey(purgeId, prefix))).toBe(0);
  }, 60_000);

  it('an undo left running by a version that kept no marker is released, not resumed from a guess', async () => {
    // The purge again, then its row as an earlier version left it: undoing, owned by a process
    // that is gone, no undo request recorded (that version kept no marker in Redis either).
    const purged = requestOf(await as('purge', 'hs/events'));
    expect(purged.status).toBe('done');
    const db = new Database(join(tmp.dir, 'queue-ops.db'));
    try {
      db.prepare("UPDATE purges SET state = 'undoing', owner = ?, undone_by = NULL WHERE id = ?").run(
        `${hostname()}:${2 ** 22 + 7}`,
        purged.id,
      );
    } finally {
      db.close();
    }
    await as('pending');
    const row = new Database(join(tmp.dir, 'queue-ops.db'), { readonly: true });
    try {
      expect(row.prepare('SELECT state, owner FROM purges WHERE id = ?').get(purged.id)).toEqual({
        state: 'done',
        owner: null,
      });
    } finally {
      row.close();
    }
    expect(await redis.llen(`${prefix}:events:wait`)).toBe(0);
    const entries = (
      jsonOf(await as('audit', '20')).data as {
        entries: { action: string; outcome: string; error?: string; params?: Record<string, unknown> }[];
      }
    ).entries;
    expect(entries.filter((e) => e.action === 'undo.recovered' && e.params?.purge === purged.id)).toEqual([
      expect.objectContaining({ outcome: 'interrupted', error: messages('en').purge.undoInterrupted }),
    ]);
    // Undoable again, as before.
    expect(requestOf(await as('undo', purged.id))).toMatchObject({ status: 'done', result: { restored: N } });
  }, 60_000);
});
