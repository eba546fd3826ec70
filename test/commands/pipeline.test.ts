import { createServer, type Server, type Socket } from 'node:net';
import type { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { renderText } from '../../src/blocks/render-text.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { ErrorCode, OpsError } from '../../src/errors.js';
import { createLogger } from '../../src/lib/logger.js';
import { freePort } from '../../src/lib/redis-server.js';
import type { Middleware } from '../../src/pipeline/dispatcher.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import { bullmqSystem, celerySystem, configYaml } from '../helpers/config-file.js';
import { freezeTimers, withTimersFrozen } from '../helpers/frozen-timers.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene, keysOf } from './fixture.js';

const redisUrl = testRedisUrl();

const QUEUE_KEYS = [
  'active',
  'completed',
  'delayed',
  'failed',
  'isPaused',
  'limits',
  'name',
  'oldestWaitingSeconds',
  'oldestWaitingFrom',
  'prioritized',
  'throughput',
  'waiting',
].sort();

function request(words: string[], actor = 'U0ALICE'): Request {
  return { actor: { id: actor }, via: 'cli', words, locale: 'en' };
}

/** The text a user reads in the reply's blocks. */
function shown(reply: Reply): string {
  return JSON.stringify(reply.message.blocks);
}

describe('the command pipeline over real BullMQ queues', () => {
  let scene: BullmqScene;
  let app: App | undefined;
  let logLines: string[];
  let closedPort: number;

  beforeEach(async () => {
    scene = new BullmqScene(redisUrl);
    logLines = [];
    closedPort = await freePort();
  });

  afterEach(async () => {
    vi.useRealTimers();
    await app?.close();
    app = undefined;
    await scene.cleanup();
  });

  /** A system whose Redis refuses every connection. */
  const down = () => bullmqSystem('zeus-down', `redis://127.0.0.1:${closedPort}`);

  function start(extraSystems: ConfigInput['systems'] = [], middleware: Middleware[] = []): App {
    const config = parseConfig(
      configYaml({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the loader fills it in from the environment
        systems: [bullmqSystem('pushizo', '${REDIS_URL}', scene.prefix), ...extraSystems],
      }),
      { REDIS_URL: redisUrl },
    );
    const logger = createLogger({ level: 'debug', destination: { write: (line) => logLines.push(line) } });
    app = createApp({ config, env: {}, logger, middleware });
    return app;
  }

  it('status reports what BullMQ itself counts for every queue, in the documented shape', async () => {
    const queues: Queue[] = [
      await scene.everyState('dispatch-ios'),
      await scene.paused('events', 4),
      scene.queue('audience'),
    ];
    await queues[2]!.add('x', {});
    const { dispatcher } = start();

    const reply = await dispatcher.handle(request(['status']));

    expect(reply.ok).toBe(true);
    const data = reply.data as { systems: Record<string, unknown>[] };
    expect(data.systems).toHaveLength(1);
    const system = data.systems[0] as {
      queues: Record<string, unknown>[];
      redis: Record<string, unknown>;
      workers: Record<string, unknown>[];
      limits: unknown[];
    };
    expect(keysOf(system)).toEqual(['limits', 'name', 'ok', 'queues', 'redis', 'type', 'workers']);
    expect(system.limits).toEqual([]);
    expect(system).toMatchObject({ name: 'pushizo', type: 'bullmq', ok: true });
    expect(keysOf(system.redis)).toEqual(['maxMemoryBytes', 'maxMemoryPolicy', 'usedMemoryBytes']);
    expect(system.queues.map((q) => q.name)).toEqual(['audience', 'dispatch-ios', 'events']);
    for (const queue of queues) {
      const counts = await queue.getJobCounts(
        'wait',
        'active',
        'delayed',
        'prioritized',
        'failed',
        'completed',
      );
      const row = system.queues.find((q) => q.name === queue.name)!;
      expect(keysOf(row)).toEqual(QUEUE_KEYS);
      expect(row.limits).toEqual({ concurrency: null, rateLimit: null });
      expect(row).toMatchObject({
        waiting: counts.wait,
        active: counts.active,
        delayed: counts.delayed,
        prioritized: counts.prioritized,
        failed: counts.failed,
        completed: counts.completed,
        isPaused: await queue.isPaused(),
      });
    }
    // The counts are the scene's, so the comparison above is not trivially 0 = 0.
    expect(system.queues.find((q) => q.name === 'dispatch-ios')).toMatchObject({
      waiting: 3,
      active: 1,
      delayed: 2,
      prioritized: 2,
      failed: 3,
      completed: 2,
      isPaused: false,
    });
    expect(system.queues.find((q) => q.name === 'events')).toMatchObject({ waiting: 4, isPaused: true });
    expect(system.workers.length).toBeGreaterThan(0);
    for (const worker of system.workers)
      expect(['active', 'name']).toEqual(expect.arrayContaining(keysOf(worker)));
  });

  it('status of one system/queue reads only that queue', async () => {
    await scene.everyState('dispatch-ios');
    await scene.paused('events', 4);
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['status', 'pushizo/events']));
    expect(reply.ok).toBe(true);
    const data = reply.data as { systems: { queues: { name: string; waiting: number }[] }[] };
    expect(data.systems[0]!.queues).toEqual([expect.objectContaining({ name: 'events', waiting: 4 })]);
  });

  it('a system on a closed port is reported as down within 5 s while the other one still reports', async () => {
    await scene.paused('events', 2);
    const { dispatcher } = start([down()]);
    // No timer may fire while it answers: a refused connection is the answer, not a connect
    // timeout, a command timeout or a reconnect backoff run out.
    const reply = await withTimersFrozen(() => dispatcher.handle(request(['status'])));
    expect(reply.ok).toBe(true);
    const data = reply.data as { systems: Record<string, unknown>[] };
    expect(data.systems.map((s) => [s.name, s.ok])).toEqual([
      ['pushizo', true],
      ['zeus-down', false],
    ]);
    expect(data.systems[1]).toEqual({
      name: 'zeus-down',
      type: 'bullmq',
      ok: false,
      error: 'Redis for `zeus-down` is not answering (connection refused).',
      redis: null,
      queues: [],
      workers: [],
      limits: [],
    });
    expect(shown(reply)).toContain('zeus-down');
    expect(shown(reply)).toContain('connection refused');
  });

  describe('a Redis that accepts connections but never answers', () => {
    let sockets: Socket[];
    let silent: Server;
    let settledBeforeTimers: boolean;
    let reply: Reply;

    beforeEach(async () => {
      sockets = [];
      let heard!: () => void;
      const asked = new Promise<void>((resolve) => {
        heard = resolve;
      });
      silent = createServer((socket) => {
        sockets.push(socket);
        socket.once('data', () => heard());
      });
      await new Promise<void>((ready) => silent.listen(0, '127.0.0.1', ready));
      await scene.paused('events', 2);
      const { port } = silent.address() as { port: number };
      const { dispatcher, backends } = start([celerySystem('zeus-hung', `redis://127.0.0.1:${port}/0`)]);
      // The healthy system's own read, to move the clock only once it is in (its command timeout
      // would fire too).
      const healthy = backends.get('pushizo')!;
      const read = healthy.status.bind(healthy);
      let healthyRead!: () => void;
      const healthyDone = new Promise<void>((resolve) => {
        healthyRead = resolve;
      });
      healthy.status = (...args) => read(...args).finally(healthyRead);
      // The 5 s are counted on a stopped timer clock, not on this machine's: once the bot is
      // connected and waiting for its first answer, nothing but a timer can end the wait; 5 s of
      // timers must, with no timer after them.
      freezeTimers();
      let settled = false;
      const answer = dispatcher.handle(request(['status']));
      void answer.then(
        () => (settled = true),
        () => (settled = true),
      );
      await asked;
      await healthyDone;
      settledBeforeTimers = settled;
      await vi.advanceTimersByTimeAsync(5_000);
      reply = await answer;
      vi.useRealTimers();
    });

    afterEach(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((closed) => silent?.close(closed));
    });

    it('is reported as not answering within 5 s', () => {
      expect(settledBeforeTimers).toBe(false);
      const data = reply.data as { systems: { name: string; ok: boolean; error?: string }[] };
      expect(data.systems[1]!.error).toMatch(/^Redis for `zeus-hung` is not answering \(/);
    });

    it('does not keep the other system from reporting', () => {
      expect(reply.ok).toBe(true);
      const data = reply.data as { systems: { name: string; ok: boolean; error?: string }[] };
      expect(data.systems.map((s) => [s.name, s.ok])).toEqual([
        ['pushizo', true],
        ['zeus-hung', false],
      ]);
    });
  });

  it('status fails as a whole only when every system asked for is down', async () => {
    const { dispatcher } = start([down()]);
    const one = await dispatcher.handle(request(['status', 'zeus-down']));
    expect(one.ok).toBe(false);
    expect(one.error?.code).toBe(ErrorCode.RedisUnavailable);
    expect((one.data as { systems: { ok: boolean }[] }).systems).toEqual([
      expect.objectContaining({ name: 'zeus-down', ok: false }),
    ]);
    const queueOnDown = await dispatcher.handle(request(['status', 'zeus-down/anything']));
    expect(queueOnDown.ok).toBe(false);
    expect(queueOnDown.error?.code).toBe(ErrorCode.RedisUnavailable);
  });

  it('an unknown verb gets one line naming the valid verbs and the likely one', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['stauts']));
    expect(reply).toMatchObject({ ok: false, visibility: 'ephemeral', error: { code: 'UnknownVerb' } });
    expect(reply.message.text).toBe(
      '`stauts` is not a /queue command. Did you mean `status`? Valid commands: `status`, `dlq`, `workers`, `redis`, `results`, `job`, `help`.',
    );
    expect(reply.message.blocks).toHaveLength(1);
  });

  it('an unknown system gets one line naming the systems, with a suggestion', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['status', 'pushzio/events']));
    expect(reply.error?.code).toBe('UnknownSystem');
    expect(reply.message.text).toBe(
      'There is no system called `pushzio`. Did you mean `pushizo`? Systems: `pushizo`.',
    );
  });

  it('an unknown queue gets one line naming the queues the system has', async () => {
    await scene.paused('events', 1);
    await scene.queue('dispatch-ios').add('x', {});
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['dlq', 'pushizo/dispatch-iso']));
    expect(reply.error?.code).toBe('UnknownQueue');
    expect(reply.message.text).toBe(
      '`pushizo` has no queue called `dispatch-iso`. Did you mean `pushizo/dispatch-ios`? Queues: `dispatch-ios`, `events`.',
    );
  });

  it('no words at all answers with help', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request([]));
    expect(reply.ok).toBe(true);
    expect(reply.data).toEqual({ verbs: ['status', 'dlq', 'workers', 'redis', 'results', 'job', 'help'] });
    expect(shown(reply)).toContain('dlq');
  });

  it('dlq returns the newest failures, grouped top errors and ISO times, never job data', async () => {
    await scene.everyState('dispatch-ios');
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['dlq', 'pushizo/dispatch-ios', '2']));
    expect(reply.ok).toBe(true);
    const data = reply.data as Record<string, unknown> & {
      jobs: Record<string, unknown>[];
      topErrors: Record<string, unknown>[];
    };
    expect(keysOf(data)).toEqual(['context', 'jobs', 'queue', 'system', 'topErrors', 'total']);
    // This config says nothing about who owns the queue.
    expect(data).toMatchObject({ system: 'pushizo', queue: 'dispatch-ios', total: 3, context: null });
    expect(data.jobs).toHaveLength(2);
    for (const job of data.jobs) {
      expect(keysOf(job)).toEqual(['attempts', 'error', 'failedAt', 'id', 'name']);
      expect(new Date(job.failedAt as string).toISOString()).toBe(job.failedAt);
    }
    expect(data.topErrors).toEqual([
      { error: 'ProviderError: APNs timed out', count: 2, example: 'ProviderError: APNs timed out' },
      {
        error: 'RenderError: template <b>missing</b>',
        count: 1,
        example: 'RenderError: template <b>missing</b>',
      },
    ]);
    expect(JSON.stringify(reply)).not.toContain('"mode"');
    // Error text from a job is escaped before it reaches mrkdwn.
    expect(shown(reply)).not.toContain('<b>');
  });

  it('dlq shows 10 failures by default', async () => {
    const queue = scene.queue('webhooks');
    await scene.everyState('webhooks');
    expect(await queue.getFailedCount()).toBe(3);
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['dlq', 'pushizo/webhooks']));
    expect((reply.data as { jobs: unknown[] }).jobs).toHaveLength(3);
  });

  it.each([['0'], ['101'], ['ten'], ['2.5'], ['-3']])(
    'dlq refuses the limit %s, naming the valid range, before touching Redis',
    async (limit) => {
      const { dispatcher } = start([down()]);
      const reply = await dispatcher.handle(request(['dlq', 'zeus-down/anything', limit]));
      expect(reply.error?.code).toBe('BadArgument');
      expect(reply.message.text).toBe(
        `\`${limit}\` is not a valid limit. Valid: a whole number from 1 to 100.`,
      );
    },
  );

  it('dlq without a queue says how it is used', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['dlq', 'pushizo']));
    expect(reply.error?.code).toBe('UsageError');
    expect(renderText(reply.message).text).toContain(
      'Name the queue as system/queue. Usage: `/queue dlq <system>/<queue> [limit]`',
    );
  });

  it('workers lists the live BullMQ workers of each system and reports a down one', async () => {
    await scene.everyState('dispatch-ios');
    const { dispatcher } = start([down()]);
    const reply = await dispatcher.handle(request(['workers']));
    expect(reply.ok).toBe(true);
    const data = reply.data as { systems: { name: string; ok: boolean; workers: unknown[] }[] };
    expect(data.systems.map((s) => [s.name, s.ok])).toEqual([
      ['pushizo', true],
      ['zeus-down', false],
    ]);
    expect(data.systems[0]!.workers.length).toBeGreaterThan(0);
  });

  it('middleware can refuse without the command running, and sees which command it guards', async () => {
    await scene.paused('events', 1);
    const seen: string[] = [];
    const deny: Middleware = async (req, next, { command }) => {
      seen.push(`${command.verb}:${command.mutating}`);
      if (req.actor.id === 'U0MALLORY')
        throw new OpsError(ErrorCode.Forbidden, { role: 'viewer', action: 'read' });
      return next();
    };
    const { dispatcher } = start([], [deny]);
    const allowed = await dispatcher.handle(request(['status']));
    expect(allowed.ok).toBe(true);
    const refused = await dispatcher.handle(request(['status'], 'U0MALLORY'));
    expect(refused).toMatchObject({ ok: false, error: { code: 'Forbidden' }, visibility: 'ephemeral' });
    expect(refused.data).toBeUndefined();
    expect(seen).toEqual(['status:false', 'status:false']);
  });

  it('middleware runs in order and can decorate the reply', async () => {
    const order: string[] = [];
    const { dispatcher } = start();
    dispatcher.use(async (_req, next) => {
      order.push('outer');
      const reply = await next();
      order.push('outer-after');
      return { ...reply, visibility: 'in_channel' };
    });
    dispatcher.use(async (_req, next) => {
      order.push('inner');
      return next();
    });
    const reply = await dispatcher.handle(request(['help']));
    expect(order).toEqual(['outer', 'inner', 'outer-after']);
    expect(reply.visibility).toBe('in_channel');
  });

  it('an unexpected error becomes "something went wrong, ref …" and is logged with that ref, never with a password', async () => {
    const { dispatcher, commands } = start();
    commands.register({
      verb: 'boom',
      mutating: false,
      async run() {
        throw new TypeError('cannot read x of undefined while talking to redis://:hunter2-pw@10.0.0.1:6379');
      },
    });
    const reply = await dispatcher.handle(request(['boom']));
    expect(reply.ok).toBe(false);
    expect(reply.error?.code).toBe('Internal');
    const ref = reply.error?.ref;
    expect(ref).toMatch(/^[0-9a-f]{8}$/);
    expect(reply.message.text).toBe(
      `Something went wrong on our side (ref ${ref}). The details are in the bot's log.`,
    );
    expect(JSON.stringify(reply)).not.toMatch(/TypeError|at .*\.ts|hunter2/);
    const logged = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'command failed unexpectedly');
    expect(logged).toMatchObject({ ref, verb: 'boom', level: 50 });
    expect(logged.err.stack).toContain('TypeError');
    expect(logLines.join('')).not.toContain('hunter2');
  });

  it('a reply whose message breaks Slack limits is an internal error, not a message Slack would reject', async () => {
    const { dispatcher, commands } = start();
    commands.register({
      verb: 'huge',
      mutating: false,
      async run() {
        return {
          ok: true,
          visibility: 'ephemeral',
          message: {
            text: 'x',
            blocks: Array.from({ length: 51 }, () => ({ type: 'divider' as const })),
          },
        };
      },
    });
    const reply = await dispatcher.handle(request(['huge']));
    expect(reply).toMatchObject({ ok: false, error: { code: 'Internal' } });
    expect(logLines.join('')).toContain('51 blocks');
  });
});
