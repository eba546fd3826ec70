import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import type { StatusData } from '../../src/commands/status.js';
import { parseConfig } from '../../src/config/load.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { createLogger } from '../../src/lib/logger.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import { bullmqSystem, celerySystem, configYaml } from '../helpers/config-file.js';
import { answeredBeforeBack, FaultyRedis } from './fault-fixture.js';

/**
 * `status` as the bot answers it (one long-lived app, its backends kept across the fault, as in
 * Slack) while the Redis of `hs` (BullMQ) and `zeus` (Celery) is killed, started again, and
 * paused for 10 s; `calm` (BullMQ, another Redis) answers all along.
 */
describe('status while the watched Redis is killed, started again and paused', () => {
  let faulty: FaultyRedis;
  let calm: PrivateRedis;
  let ops: QueueOps;
  let dir: string;
  const status = async (...scope: string[]): Promise<{ reply: Reply; data: StatusData }> => {
    const request: Request = {
      actor: { id: 'U0DAVE' },
      via: 'slack',
      channel: 'C0INCIDENT',
      words: ['status', ...scope],
      locale: 'en',
    };
    const reply = await ops.dispatcher.handle(request);
    return { reply, data: reply.data as StatusData };
  };

  /** Each system down is one line naming it; nothing in the reply looks like a stack or ioredis. */
  const expectDown = (reply: Reply, data: StatusData, names: string[]) => {
    const down = data.systems.filter((s) => !s.ok);
    expect(down.map((s) => s.name)).toEqual(names);
    for (const system of down) {
      expect(system.error).toMatch(new RegExp(`^Redis for \`${system.name}\` is not answering \\(.+\\)\\.$`));
    }
    const shown = JSON.stringify(reply.message);
    expect(shown).not.toMatch(
      /\\n\s+at |MaxRetriesPerRequestError|ioredis|ECONNREFUSED|Stream isn't writeable/,
    );
    for (const name of names) expect(reply.message.text + shown).toContain(name);
  };

  beforeAll(async () => {
    faulty = await FaultyRedis.start();
    calm = await startPrivateRedis();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-fault-status-'));
    const seed = new Redis(faulty.url);
    await seedRawBullmqJobs(seed, { prefix: 'hs', queue: 'events', count: 12 });
    const celery = new Redis(`${faulty.url}/1`);
    await celery.sadd('_kombu.binding.celery', 'celery\x06\x16\x06\x16celery');
    await celery.lpush(
      'celery',
      ...Array.from({ length: 5 }, (_, n) =>
        JSON.stringify({ body: '', headers: { id: `t${n}`, task: 'tasks.add' } }),
      ),
    );
    const other = new Redis(calm.url);
    await seedRawBullmqJobs(other, { prefix: 'hs', queue: 'mail', count: 3 });
    for (const client of [seed, celery, other]) client.disconnect();
    const config = parseConfig(
      configYaml({
        store: `sqlite:${dir}/store.db`,
        roles: { viewer: ['*'] },
        systems: [
          bullmqSystem('hs', faulty.url, 'hs'),
          celerySystem('zeus', `${faulty.url}/1`, { queues: ['celery'], inspectTimeoutMs: 200 }),
          bullmqSystem('calm', calm.url, 'hs'),
        ],
      }),
      {},
    );
    ops = await createQueueOps({ config, env: {}, logger: createLogger({ level: 'silent' }) });
    const { data } = await status();
    expect(data.systems.map((s) => [s.name, s.ok])).toEqual([
      ['hs', true],
      ['zeus', true],
      ['calm', true],
    ]);
  }, 60_000);

  afterAll(async () => {
    await ops?.close();
    await faulty?.stop();
    await calm?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('killed', () => {
    const scopes = ['hs', 'hs/events', 'zeus/celery'];
    let all: Awaited<ReturnType<typeof status>>;
    let alone: Awaited<ReturnType<typeof status>>[];

    beforeAll(async () => {
      await faulty.kill();
      // Started again 10 s after the kill: every answer here comes before it is back.
      await answeredBeforeBack(
        () => faulty.restart(),
        async () => {
          all = await status();
          alone = [];
          for (const scope of scopes) alone.push(await status(scope));
        },
      );
    });

    it('names hs and zeus as not answering at once, calm still reports', () => {
      expect(all.reply.ok).toBe(true);
      expectDown(all.reply, all.data, ['hs', 'zeus']);
      expect(all.data.systems.find((s) => s.name === 'calm')?.queues).toMatchObject([
        { name: 'mail', waiting: 3 },
      ]);
    });

    it('asked alone, each of hs, hs/events and zeus/celery fails with that one line', () => {
      scopes.forEach((scope, i) => {
        const one = alone[i]!;
        expect(one.reply.ok).toBe(false);
        expect(one.reply.error?.code).toBe('RedisUnavailable');
        expectDown(one.reply, one.data, [scope.split('/')[0]!]);
      });
    });
  });

  it('started again: the first status after it is back shows the jobs it persisted, not the last failure', async () => {
    const back = await status();
    expect(back.data.systems.map((s) => [s.name, s.ok])).toEqual([
      ['hs', true],
      ['zeus', true],
      ['calm', true],
    ]);
    expect(back.data.systems[0]!.queues).toMatchObject([{ name: 'events', waiting: 12 }]);
    expect(back.data.systems[1]!.queues).toMatchObject([{ name: 'celery', waiting: 5 }]);
  });

  it('paused for 10 s: every status asked meanwhile answers before Redis is back, naming what hangs, and the one after shows everything again', async () => {
    faulty.pause();
    // Asked together, as several people in an incident channel would, and answered while Redis
    // still hangs (each system's deadline, Celery's inspect wait on top, is well inside the 10 s).
    const [all, hs, zeus] = await answeredBeforeBack(
      () => faulty.resume(),
      () => Promise.all([status(), status('hs/events'), status('zeus')]),
    );
    expectDown(all.reply, all.data, ['hs', 'zeus']);
    expect(all.data.systems.find((s) => s.name === 'calm')?.ok).toBe(true);
    expectDown(hs.reply, hs.data, ['hs']);
    expectDown(zeus.reply, zeus.data, ['zeus']);
    expect(hs.reply.error?.code).toBe('RedisUnavailable');
    const after = await status();
    expect(after.data.systems.map((s) => [s.name, s.ok])).toEqual([
      ['hs', true],
      ['zeus', true],
      ['calm', true],
    ]);
    expect(after.data.systems[0]!.queues).toMatchObject([{ name: 'events', waiting: 12 }]);
  }, 40_000);
});
