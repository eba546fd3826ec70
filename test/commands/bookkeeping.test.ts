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

  it('when every retry fails too, the audit still says done, the user is told it is paused, and the log says what could not be stored', async () => {
    const { ops: app, faults } = await start();
    const queue = scene.queue('dispatch-ios');
    await queue.add('send', {});
    faults.failFinish = 1_000;
    const reply = await pause(app);
    expect(await queue.isPaused()).toBe(true);
    expect(reply.ok).toBe(true);
    expect(shown(reply)).toContain('pushizo/dispatch-ios is paused.');
    const entries = await trail(app);
    expect(entries.filter((e) => e.startsWith('action.pause'))).toEqual(['action.pause done']);
    expect(entries.join('\n')).not.toMatch(/failed|StoreUnavailable/);
    // Still `executing` in the store: once its lease runs out the sweep reports it interrupted
    // ("check the queue"), never failed.
    const id = (reply.data as { request: { id: string } }).request.id;
    expect((await app.store.getRequest(id))?.status).toBe('executing');
    expect(logged.join('\n')).toContain('the action ran but its outcome could not be stored');
  });
});
