import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Reply } from '../../src/pipeline/types.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { POSTGRES_REQUIRED } from '../helpers/postgres.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { postgresBinaries, startPrivatePostgres, startProxy } from './private-postgres.js';

/** A running bot (the long-lived runtime) on a private PostgreSQL cluster behind a proxy the test controls. */
export interface PostgresFaultBot {
  readonly server: Awaited<ReturnType<typeof startPrivatePostgres>>;
  readonly proxy: Awaited<ReturnType<typeof startProxy>>;
  readonly config: string;
  readonly runtime: QueueOps;
  /** A command from an operator in the incident channel, through the dispatcher as Slack sends it. */
  ask(...words: string[]): Promise<Reply>;
  /** Whether the test queue is paused, read from Redis. */
  paused(): Promise<boolean>;
  /** The chain as the server holds it (read behind the proxy), and whether its head is the newest entry. */
  chain(): Promise<{ entries: string[]; headIsNewest: boolean }>;
  /** The same process pauses and resumes again, and the chain verifies. */
  expectServing(): Promise<void>;
}

/**
 * `describe` over a bot whose store is a private cluster (never the machine's shared one): skipped
 * with a line when the PostgreSQL binaries are absent, a failure under CI or REQUIRE_POSTGRES=1.
 */
export function describePostgresFault(
  title: string,
  file: string,
  body: (bot: PostgresFaultBot) => void,
): void {
  const bin = postgresBinaries();
  if (!bin && POSTGRES_REQUIRED)
    throw new Error(
      'PostgreSQL is required (CI or REQUIRE_POSTGRES=1) but no /usr/lib/postgresql/*/bin/pg_ctl exists',
    );
  if (!bin) console.warn(`${file}: skipped, no /usr/lib/postgresql/*/bin (initdb, pg_ctl)`);

  describe.skipIf(!bin)(title, () => {
    const redisUrl = testRedisUrl();
    const prefix = randomName('po');
    const schema = `qo_fault_${randomName('s')}`;
    let server: PostgresFaultBot['server'];
    let proxy: PostgresFaultBot['proxy'];
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
      config = writeConfigFile(tmp.dir, {
        store: `postgres://postgres@127.0.0.1:${proxy.port}/postgres?schema=${schema}`,
        roles: TEST_ROLES,
        slack: { allowedChannels: ['C0INCIDENT'] },
        // Every refused attempt counts as a change asked for; the default 10 a minute would stop the test.
        rateLimit: { perUserPerMinute: 1000 },
        systems: [bullmqSystem('pushizo', redisUrl, prefix)],
      });
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

    const bot: PostgresFaultBot = {
      get server() {
        return server;
      },
      get proxy() {
        return proxy;
      },
      get config() {
        return config;
      },
      get runtime() {
        return runtime;
      },
      ask: (...words) =>
        runtime.dispatcher.handle({
          actor: { id: 'U0ALICE' },
          via: 'slack',
          channel: 'C0INCIDENT',
          words,
          locale: 'en',
        }),
      paused: async () => (await redis.hexists(`${prefix}:dispatch-ios:meta`, 'paused')) === 1,
      async chain() {
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
      },
      async expectServing() {
        const pause = await bot.ask('pause', 'pushizo/dispatch-ios');
        expect(pause.ok, pause.message.text).toBe(true);
        expect(await bot.paused()).toBe(true);
        const resume = await bot.ask('resume', 'pushizo/dispatch-ios');
        expect(resume.ok, resume.message.text).toBe(true);
        expect(await bot.paused()).toBe(false);
        expect(await runtime.audit.verify()).toMatchObject({ ok: true });
      },
    };
    body(bot);
  });
}
