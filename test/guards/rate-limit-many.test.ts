import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { describePostgres, POSTGRES_URL } from '../helpers/postgres.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * The rate limit with many people at once: 12 operators each fire 5 pauses at the same moment,
 * spread over two replicas sharing one store, with 3 a minute allowed. Every person gets exactly
 * 3 through and 2 one-line refusals, whatever the others do; nobody's command fails for another
 * reason; each refusal is one audited denial. Real pauses of BullMQ queues on the test Redis.
 */
const redis = testRedisUrl();
const PEOPLE = Array.from({ length: 12 }, (_, i) => `U0OPS${String(i).padStart(2, '0')}`);
const EACH = 5;
const LIMIT = 3;
const queueOf = (person: number, n: number) => `q${person}x${n}`;
const QUEUES = PEOPLE.flatMap((_, p) => Array.from({ length: EACH }, (_, n) => queueOf(p, n)));

function describeManyAtOnce(title: string, storeUrl: () => Promise<{ url: string; drop(): Promise<void> }>) {
  describe(title, () => {
    const replicas: QueueOps[] = [];
    let prefix: string;
    let drop: (() => Promise<void>) | undefined;

    afterEach(async () => {
      for (const replica of replicas.splice(0)) await replica.close();
      await deletePrefix(redis, prefix);
      await drop?.();
    });

    it('each person gets exactly their allowance, in one line each past it, audited once', async () => {
      prefix = randomName('many');
      const store = await storeUrl();
      drop = store.drop;
      const config = parseConfig(
        configYaml({
          systems: [bullmqSystem('pushizo', redis, prefix, { queues: QUEUES })],
          store: store.url,
          roles: { viewer: ['*'], operator: PEOPLE },
          policies: { pause: { role: 'operator', approvals: 0 } },
          rateLimit: { perUserPerMinute: LIMIT },
        }),
        {},
      );
      for (let i = 0; i < 2; i++)
        replicas.push(await createQueueOps({ config, env: {}, logger: silentLogger() }));

      const request = (actor: string, words: string[]): Request => ({
        actor: { id: actor },
        via: 'cli',
        words,
        locale: 'en',
      });
      const replies: Reply[][] = await Promise.all(
        PEOPLE.map((person, p) =>
          Promise.all(
            Array.from({ length: EACH }, (_, n) =>
              replicas[n % 2]!.dispatcher.handle(request(person, ['pause', `pushizo/${queueOf(p, n)}`])),
            ),
          ),
        ),
      );

      for (const [p, mine] of replies.entries()) {
        const codes = mine.map((r) => (r.ok ? 'ok' : r.error?.code)).sort();
        expect(codes, `${PEOPLE[p]}: ${mine.map((r) => r.message.text).join(' | ')}`).toEqual([
          ...Array(EACH - LIMIT).fill('RateLimited'),
          ...Array(LIMIT).fill('ok'),
        ]);
        for (const refused of mine.filter((r) => !r.ok))
          expect(refused.message.text).toMatch(/^You ran 3 commands that change things in the last minute/);
      }
      const trail = await replicas[0]!.audit.recent(500);
      for (const person of PEOPLE) {
        expect(trail.filter((e) => e.action === 'denied' && e.actorId === person)).toHaveLength(EACH - LIMIT);
        expect(trail.filter((e) => e.action === 'command.pause' && e.actorId === person)).toHaveLength(LIMIT);
      }
    }, 60_000);
  });
}

describeManyAtOnce('the rate limit, many people at once on two replicas (SQLite store)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'qo-rate-many-'));
  return {
    url: `sqlite:${join(dir, 'store.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

await describePostgres('the rate limit, many people at once on two replicas (PostgreSQL store)', () => {
  describeManyAtOnce('a fresh schema', async () => {
    const schema = `qo_rate_${randomBytes(6).toString('hex')}`;
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    return {
      url: url.toString(),
      drop: async () => {
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    };
  });
});
