import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readManifest } from '../../src/archive/archive.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { writeConfigFile } from '../helpers/config-file.js';
import { purgeAloneConfig } from '../helpers/purge-config.js';
import { BULLMQ_FAULT_BACKEND, CELERY_FAULT_BACKEND } from './fault-backends.js';
import {
  archiveDirOf,
  archivedLines,
  auditEntries,
  FaultyRedis,
  storedRequest,
  until,
} from './fault-fixture.js';

const N = 20_000;
/** The purge killed midway: three chunks of 10,000, killed once the first is deleted. */
const N_KILLED = 30_000;

const n = (value: number) => value.toLocaleString('en-US');

/**
 * A Redis that keeps snapshots only (Debian's default: save points, no append-only file), SIGKILLed
 * and started again from a snapshot taken before what it last did: it comes back older than it
 * was, as after a failover to a replica that lagged or a restore from backup. Undo must never put
 * back a job that is there again (a Celery task would run twice), and a purge finished after such
 * a restart must count what really left Redis, archiving nothing twice.
 */
describe.each([BULLMQ_FAULT_BACKEND, CELERY_FAULT_BACKEND])(
  'a $kind queue on a Redis with snapshots only, back older than it was',
  (kind) => {
    let redis: FaultyRedis;
    let client: Redis;
    let tmp: ReturnType<typeof tempDir>;
    let config: string;
    const target = `${kind.system}/${kind.queue}`;
    const as = (...words: string[]) =>
      runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', ...words]);
    const queuedIds = async () => (await client.lrange(kind.list, 0, -1)).map(kind.queuedId);

    beforeAll(async () => {
      redis = await FaultyRedis.start({ snapshots: true });
      client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      tmp = tempDir(`fault-snapshot-${kind.system}`);
      config = writeConfigFile(tmp.dir, purgeAloneConfig(tmp.dir, kind.systemConfig(redis.url)));
    }, 60_000);

    beforeEach(async () => {
      await client.flushall();
    });

    afterAll(async () => {
      client?.disconnect();
      await redis?.stop();
      tmp?.remove();
    });

    /** Seeds `count` entries, saves the snapshot, purges them all; Redis then dies and comes back from it. */
    const purgedThenBackFromSnapshot = async (count: number) => {
      await kind.seed(client, count);
      const before = await client.lrange(kind.list, 0, -1);
      await redis.snapshot();
      const purged = requestOf(await as('purge', target));
      expect(purged).toMatchObject({ status: 'done', result: { purged: count, archived: count } });
      expect(await client.llen(kind.list)).toBe(0);
      await redis.kill();
      await redis.restart();
      expect(await client.lrange(kind.list, 0, -1)).toEqual(before);
      return { before, purgeId: purged.id };
    };

    it(`undo after Redis came back with all ${n(N)} purged ${kind.noun} puts none back twice and says all were already there`, async () => {
      const { before, purgeId } = await purgedThenBackFromSnapshot(N);

      const undone = await as('undo', purgeId);
      const undo = requestOf(undone);
      expect(undo).toMatchObject({ status: 'done', result: { restored: 0, alreadyThere: N, purgeId } });
      expect(JSON.stringify(jsonOf(undone).message.blocks)).toContain(
        `Restored 0 jobs of purge ${purgeId}. ${n(N)} were already in Redis under the same id and were left as they were, not put back twice.`,
      );
      const ids = await queuedIds();
      const duplicates = ids.length - new Set(ids).size;
      console.log(
        `${kind.kind}: after the snapshot restart and undo, ${n(ids.length)} queued for ${n(new Set(ids).size)} ids: ${duplicates} duplicates`,
      );
      expect(duplicates).toBe(0);
      expect(await client.lrange(kind.list, 0, -1)).toEqual(before);

      const entry = (await auditEntries(config)).filter((e) => e.action === 'action.undo').at(-1)!;
      expect(entry.params).toMatchObject({ result: { restored: 0, alreadyThere: N } });
      expect(storedRequest(tmp.dir, undo.id).result).toMatchObject({ restored: 0, alreadyThere: N });
      expect(await client.keys('*queue-ops:undo:*')).toEqual([]);
    }, 300_000);

    it('undo after Redis came back, and workers took some since, puts back only the ones no longer in Redis', async () => {
      const count = 4_000;
      const { before, purgeId } = await purgedThenBackFromSnapshot(count);
      // Workers took the oldest 1,500 since, ran them and are done with them; one more is held by
      // a worker now.
      await kind.ranAndGone(client, before.slice(-1_500));
      const held = before[0]!;
      await kind.takeByWorker(client, held);
      expect(await client.llen(kind.list)).toBe(count - 1_501);

      const undo = requestOf(await as('undo', purgeId));
      expect(undo).toMatchObject({
        status: 'done',
        result: { restored: 1_500, alreadyThere: count - 1_500, purgeId },
      });
      // Each task once: the one a worker holds is not queued again, the others are in their old order.
      expect(await client.lrange(kind.list, 0, -1)).toEqual(before.slice(1));
    }, 300_000);

    it(`a purge of ${n(N_KILLED)} killed midway, finished after Redis came back older: counts are what left Redis, nothing archived twice`, async () => {
      await kind.seed(client, N_KILLED);
      const all = await queuedIds();
      // The snapshot it comes back from: taken before the purge.
      await redis.snapshot();
      const asked = as('purge', target);
      await until('a chunk is deleted', async () => (await client.llen(kind.list)) <= N_KILLED - 10_000);
      await redis.kill();
      const interrupted = await asked;
      expect(jsonOf(interrupted).error?.code).toBe('PurgeInterrupted');
      const purgeId = requestOf(interrupted).id;
      await redis.restart();
      expect(await client.llen(kind.list)).toBe(N_KILLED);

      // The next command line finishes the purge. Redis' slowlog keeps the longest calls it made
      // (printed, not asserted: machines here are noisy; conditional-delete.test.ts proves the bound).
      await client.config('SET', 'slowlog-log-slower-than', '0');
      await client.config('SET', 'slowlog-max-len', '100000');
      await client.slowlog('RESET');
      const next = await as('pending');
      expect(next.code, next.stdout + next.stderr).toBe(0);
      const calls = (await client.slowlog('GET', -1)) as [number, number, number, string[]][];
      const longest = calls.reduce((worst, call) => (call[2] > worst[2] ? call : worst));
      console.log(
        `${kind.kind}: the recovery's longest Redis call took ${(longest[2] / 1000).toFixed(1)} ms (${longest[3][0]}), of ${n(calls.length)}`,
      );

      const archive = join(archiveDirOf(tmp.dir), purgeId);
      const archived = (await archivedLines<Record<string, string>>(archive)).map(kind.archivedId);
      const queued = await queuedIds();
      const manifest = await readManifest(archive);
      console.log(
        `${kind.kind}: purge killed midway, Redis back from the older snapshot: archived ${n(archived.length)}, ` +
          `deleted (manifest purged) ${n(manifest.counts.purged)}, skipped ${n(manifest.counts.skipped)}, still queued ${n(queued.length)}`,
      );
      // No id archived twice; every entry once, queued or archived.
      expect(archived.length - new Set(archived).size).toBe(0);
      expect(queued.filter((id) => archived.includes(id))).toEqual([]);
      expect(new Set([...archived, ...queued])).toEqual(new Set(all));
      // What left Redis is what the manifest, the request and the audit say.
      const left = N_KILLED - queued.length;
      expect(manifest.counts).toEqual({
        archived: archived.length,
        purged: left,
        skipped: archived.length - left,
      });
      expect(storedRequest(tmp.dir, purgeId)).toMatchObject({
        status: 'done',
        result: { purged: left, archived: archived.length },
      });
      const recovered = (await auditEntries(config)).filter((e) => e.action === 'purge.recovered').at(-1)!;
      expect(recovered.params).toMatchObject({ request: purgeId, purged: left, archived: archived.length });
      console.log(`${kind.kind}: recovery said ${JSON.stringify(recovered.params?.recovered)}`);
      // The snapshot predates the purge: every job it had archived was back in Redis, none already gone.
      expect(recovered.params?.recovered).toMatchObject({ alreadyGone: 0 });

      // Undo puts back what left Redis, each once.
      const undo = requestOf(await as('undo', purgeId));
      expect(undo).toMatchObject({ status: 'done', result: { restored: left, alreadyThere: 0 } });
      const back = await queuedIds();
      expect(back).toHaveLength(N_KILLED);
      expect(new Set(back)).toEqual(new Set(all));
    }, 300_000);
  },
);
