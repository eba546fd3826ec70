import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import type { Reply } from '../../src/commands/types.js';
import { loadConfigFile } from '../../src/config/load.js';
import { messages } from '../../src/i18n/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { ROLES, tempDir, writeConfig } from '../actions/cli-helpers.js';
import { connectionFor, deletePrefix, randomName } from '../backends/bullmq/helpers.js';
import { POSTGRES_REQUIRED } from '../helpers/postgres.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { postgresBinaries, startPrivatePostgres, startProxy } from './private-postgres.js';

const redisUrl = testRedisUrl();
const bin = postgresBinaries();
if (!bin && POSTGRES_REQUIRED)
  throw new Error(
    'PostgreSQL is required (CI or REQUIRE_POSTGRES=1) but no /usr/lib/postgresql/*/bin/pg_ctl exists',
  );
if (!bin) console.warn('test/faults/postgres-outage: skipped, no /usr/lib/postgresql/*/bin (initdb, pg_ctl)');

const OUTAGE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The bot's PostgreSQL store behind a 30 s network partition (a TCP proxy the test controls holds
 * every connection open and passes nothing: no answer, no error). Apart from
 * postgres-outage.test.ts so the two 30 s waits overlap. A request is answered in one clear line
 * while it lasts, and the same running process serves requests once it heals.
 */
describe.skipIf(!bin)('a running bot whose PostgreSQL store is cut off by a network partition', () => {
  const prefix = randomName('po');
  const schema = `qo_fault_${randomName('s')}`;
  let server: Awaited<ReturnType<typeof startPrivatePostgres>>;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let redis: Redis;
  let queue: Queue;
  let runtime: QueueOps;
  let direct: pg.Client | undefined;

  beforeAll(async () => {
    server = await startPrivatePostgres(bin!);
    proxy = await startProxy(server.port);
    tmp = tempDir('pgpartition');
    redis = new Redis(redisUrl);
    queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', {});
    config = writeConfig(tmp.dir, `postgres://postgres@127.0.0.1:${proxy.port}/postgres?schema=${schema}`, [
      ...ROLES,
      'slack:',
      '  allowedChannels: [C0INCIDENT]',
      // Every refused attempt counts as a change asked for; the default 10 a minute would stop the test.
      'rateLimit:',
      '  perUserPerMinute: 1000',
      'systems:',
      '  - name: pushizo',
      '    type: bullmq',
      `    redis: ${JSON.stringify(redisUrl)}`,
      `    prefix: ${prefix}`,
    ]);
    runtime = await createQueueOps({
      config: loadConfigFile(config, {}),
      env: {},
      logger: createLogger({ level: 'silent' }),
    });
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    await direct?.end().catch(() => {});
    await queue?.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    await proxy?.close();
    server?.stop();
    tmp?.remove();
  });

  const ask = (...words: string[]): Promise<Reply> =>
    runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'slack',
      channel: 'C0INCIDENT',
      words,
      locale: 'en',
    });
  const paused = async () => (await redis.hexists(`${prefix}:dispatch-ios:meta`, 'paused')) === 1;
  /** The chain as the server holds it (read behind the proxy), and whether its head is the newest entry. */
  async function chain() {
    if (direct) await direct.end().catch(() => {});
    direct = new pg.Client({ connectionString: server.url });
    // Restarts terminate it too; it is only the test's window onto the server.
    direct.on('error', () => {});
    await direct.connect();
    const entries = (
      await direct.query(`SELECT seq, action, outcome FROM "${schema}".audit_log ORDER BY seq`)
    ).rows as { seq: string; action: string; outcome: string }[];
    const head = (await direct.query(`SELECT seq FROM "${schema}".audit_head WHERE id = 1`)).rows[0] as {
      seq: string;
    };
    return {
      entries: entries.map((e) => `${e.seq} ${e.action} ${e.outcome}`),
      headIsNewest: Number(head.seq) === Number(entries.at(-1)?.seq ?? 0),
    };
  }

  /** The same process pauses and resumes again, and the chain verifies. */
  async function expectServing() {
    const pause = await ask('pause', 'pushizo/dispatch-ios');
    expect(pause.ok, pause.message.text).toBe(true);
    expect(await paused()).toBe(true);
    const resume = await ask('resume', 'pushizo/dispatch-ios');
    expect(resume.ok, resume.message.text).toBe(true);
    expect(await paused()).toBe(false);
    expect(await runtime.audit.verify()).toMatchObject({ ok: true });
  }

  it('answers every request during a 30 s partition (nothing comes back) in one clear line, and serves again once it heals', async () => {
    await expectServing();
    const before = await chain();
    proxy.blackhole();
    const until = Date.now() + OUTAGE_MS;
    // A request must be answered while the partition lasts, not hang until it heals.
    const answered = await Promise.race([
      ask('pause', 'pushizo/dispatch-ios').then((reply) => reply),
      sleep(OUTAGE_MS - 2000).then(() => undefined),
    ]);
    expect(answered, 'no answer while the store was partitioned').toBeDefined();
    expect(answered!.ok).toBe(false);
    expect(answered!.error?.code).toBe('StoreUnavailable');
    expect(answered!.message.text.split('\n')).toHaveLength(1);
    expect(
      messages('en').errors.describe({ code: 'StoreUnavailable', params: answered!.error!.params ?? {} }),
    ).toMatch(
      // A pooled connection's statement gets no answer; a new connection never completes its start-up.
      /^The bot's own store is not answering \((no answer in 15 s|timeout exceeded when trying to connect)\); nothing was changed\.$/,
    );
    expect(await paused()).toBe(false);
    await sleep(Math.max(0, until - Date.now()));
    await proxy.restore();

    expect(await chain()).toEqual(before);
    await expectServing();
  }, 90_000);
});
