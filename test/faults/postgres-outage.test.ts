import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import type { Reply } from '../../src/commands/types.js';
import { loadConfigFile } from '../../src/config/load.js';
import { messages } from '../../src/i18n/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { jsonOf, ROLES, runCliInProcess, tempDir, writeConfig } from '../actions/cli-helpers.js';
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
 * The bot's PostgreSQL store failing under a running bot: the server restarted (every connection
 * terminated), then out of reach for 30 s behind a TCP proxy the test controls (connections reset
 * and refused; then a partition where nothing comes back). A private cluster, never the machine's
 * shared one. Each time: one clear line per request, nothing changed, no half-written audit entry,
 * the chain verifies, and the same running process serves requests again once it is back.
 */
describe.skipIf(!bin)('a running bot whose PostgreSQL store restarts or goes out of reach', () => {
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
    tmp = tempDir('pgfault');
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

  /** A pause that must not happen: one line naming the store, and the queue left as it was. */
  async function expectRefused() {
    const reply = await ask('pause', 'pushizo/dispatch-ios');
    expect(reply.ok, reply.message.text).toBe(false);
    expect(reply.error?.code).toBe('StoreUnavailable');
    const line = messages('en').errors.describe({
      code: 'StoreUnavailable',
      params: reply.error!.params ?? {},
    });
    expect(line).toContain("The bot's own store is not answering");
    expect(line).toContain('nothing was changed');
    expect(reply.message.text.split('\n')).toHaveLength(1);
    expect(reply.message.text).not.toMatch(/\n\s+at |Error:/);
    expect(await paused()).toBe(false);
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

  it('serves the first request after a PostgreSQL restart', async () => {
    await expectServing();
    await server.restart();
    await expectServing();
  });

  it('answers every request while the store is refused for 30 s in one clear line, changes nothing, and serves again once it is back', async () => {
    const before = await chain();
    await proxy.refuse();
    const until = Date.now() + OUTAGE_MS;
    let refused = 0;
    while (Date.now() < until - 1000) {
      await expectRefused();
      refused++;
      await sleep(Math.min(6000, Math.max(0, until - Date.now() - 1000)));
    }
    expect(refused).toBeGreaterThanOrEqual(3);
    // The command line in the same outage: its actions need the store, reads still answer.
    const cli = await runCliInProcess([
      '--config',
      config,
      '--user',
      'U0ALICE',
      'pause',
      'pushizo/dispatch-ios',
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain('without a store');
    expect((await runCliInProcess(['--config', config, '--user', 'U0ALICE', 'status', 'pushizo'])).code).toBe(
      0,
    );
    await sleep(Math.max(0, until - Date.now()));
    await proxy.restore();

    const after = await chain();
    expect(after).toEqual(before);
    expect(after.headIsNewest).toBe(true);
    await expectServing();
    const verify = jsonOf(await runCliInProcess(['--config', config, '--json', 'audit', 'verify']));
    expect(verify.ok, JSON.stringify(verify)).toBe(true);
  }, 90_000);
});
