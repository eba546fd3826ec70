import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Reply } from '../../src/pipeline/types.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { withFaults } from '../helpers/faulty-store.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene } from './fixture.js';

const redisUrl = testRedisUrl();

const shown = (reply: Reply) => `${reply.message.text}\n${JSON.stringify(reply.message.blocks)}`;

describe('a pause of a real BullMQ queue whose outcome cannot be stored at first (SQLITE_BUSY)', () => {
  let scene: BullmqScene;
  let ops: QueueOps | undefined;
  let logged: string[];

  beforeEach(() => {
    scene = new BullmqScene(redisUrl);
    logged = [];
  });

  afterEach(async () => {
    await ops?.close();
    ops = undefined;
    await scene.cleanup();
  });

  async function start() {
    const config = parseConfig(
      `store: sqlite:${scene.dir}/store.db
roles: { viewer: ["*"], operator: [U0ALICE] }
policies:
  pause: { role: operator, approvals: 0 }
systems:
  - name: pushizo
    type: bullmq
    redis: \${REDIS_URL}
    prefix: ${scene.prefix}
`,
      { REDIS_URL: redisUrl },
    );
    const flaky = withFaults(createSqliteStore(`${scene.dir}/store.db`));
    ops = await createQueueOps({
      config,
      env: {},
      store: flaky.store,
      logger: createLogger({ level: 'error', destination: { write: (line: string) => logged.push(line) } }),
    });
    return { ops, faults: flaky.faults };
  }

  const pause = (app: QueueOps) =>
    app.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'cli',
      words: ['pause', 'pushizo/dispatch-ios'],
      locale: 'en',
    });

  const trail = async (app: QueueOps) =>
    (await app.audit.recent(20))
      .reverse()
      .map((e) => `${e.action} ${e.outcome}${e.error ? ` ${e.error}` : ''}`);

  it('records the pause as done, retries the bookkeeping write until it lands, and never records a failure', async () => {
    const { ops: app, faults } = await start();
    const queue = scene.queue('dispatch-ios');
    await queue.add('send', {});
    faults.failFinish = 2;
    const reply = await pause(app);
    expect(reply.ok).toBe(true);
    expect(shown(reply)).toContain('pushizo/dispatch-ios is paused.');
    expect(await queue.isPaused()).toBe(true);
    const id = (reply.data as { request: { id: string } }).request.id;
    expect((await app.store.getRequest(id))?.status).toBe('done');
    const entries = await trail(app);
    expect(entries.filter((e) => e.startsWith('action.pause'))).toEqual(['action.pause done']);
    expect(entries.join('\n')).not.toMatch(/failed|StoreUnavailable/);
  });

  it('when every retry fails too, the user is told it is paused, the log says what could not be written, and the bot keeps writing the outcome until it lands', async () => {
    const { ops: app, faults } = await start();
    const queue = scene.queue('dispatch-ios');
    await queue.add('send', {});
    faults.failFinish = 1_000;
    const reply = await pause(app);
    expect(await queue.isPaused()).toBe(true);
    expect(reply.ok).toBe(true);
    expect(shown(reply)).toContain('pushizo/dispatch-ios is paused.');
    // The outcome and its entry are one write: neither is stored yet, the start and its entry are.
    const id = (reply.data as { request: { id: string } }).request.id;
    expect((await app.store.getRequest(id))?.status).toBe('executing');
    expect(await trail(app)).toContain('request.executing executing');
    expect((await trail(app)).filter((e) => e.startsWith('action.pause'))).toEqual([]);
    expect(logged.join('\n')).toContain('the action ran but its outcome could not be written');
    // The sweep of this bot leaves it alone: it is not dead, it is still writing.
    expect(await app.approvals.recoverInterrupted()).toEqual([]);
    // The store takes writes again: the kept outcome lands, with its entry, never as a failure.
    faults.failFinish = 0;
    await expect.poll(async () => (await app.store.getRequest(id))?.status, { timeout: 10_000 }).toBe('done');
    const entries = await trail(app);
    expect(entries.filter((e) => e.startsWith('action.pause'))).toEqual(['action.pause done']);
    expect(entries.join('\n')).not.toMatch(/failed|StoreUnavailable/);
    expect(await app.audit.verify()).toMatchObject({ ok: true });
  });
});
