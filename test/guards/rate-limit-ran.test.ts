import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Request } from '../../src/pipeline/types.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { sampleAlert } from '../store/escalation-contract.js';
import { captureResponses, randomId, slashCommand, startWiredBot } from '../transports/slack/harness.js';

/**
 * The rate limit (10 a minute by default) counts actions that ran. Mistyped retry ids,
 * usage errors and refusals give their use back, and `ack`/`snooze` are not counted: ten typos no
 * longer lock a user out of `pause` and `ack`, and acknowledging an alert storm does not stop at
 * the eleventh. Real BullMQ on the test Redis, a real SQLite store; in Slack, the real wiring
 * (`startBot`, the real listeners and the guards in the dispatcher), Slack's HTTP side nock'd.
 */
const redis = testRedisUrl();
const QUEUES = Array.from({ length: 14 }, (_, i) => `q${i}`);

/** `pushizo` with its 14 queues under `prefix`, a store in `dir`, Alice the one operator. */
function configOf(dir: string, prefix: string): ConfigInput {
  return {
    slack: { allowedChannels: ['C0INCIDENT'] },
    store: `sqlite:${join(dir, 'store.db')}`,
    roles: { viewer: ['*'], operator: ['U0ALICE'] },
    systems: [bullmqSystem('pushizo', redis, prefix, { queues: QUEUES })],
  };
}

/** One failed job in `q0`, stored by a real worker (so `retry` has a queue with failures). */
async function seedFailure(prefix: string): Promise<void> {
  const connection = connectionFor(redis);
  const queue = new Queue('q0', { prefix, connection });
  await queue.add('push', {});
  const worker = new Worker(
    'q0',
    async () => {
      throw new Error('gateway down');
    },
    { prefix, connection: connectionFor(redis) },
  );
  await new Promise<void>((resolve) => worker.once('failed', () => resolve()));
  await worker.close();
  await queue.close();
}

async function insertStorm(ops: Pick<QueueOps, 'store'>, count: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + count; i++) {
    const alert = sampleAlert({ key: `storm|pushizo/q${i}`, subject: `pushizo/q${i}`, queue: `q${i}` });
    await ops.store.escalation.insertAlert(alert, []);
    ids.push(alert.id);
  }
  return ids;
}

describe('the rate limit counts actions that ran (command line)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qo-rate-ran-'));
  const prefix = randomName('rran');
  let ops: QueueOps;
  const cli = (words: string[]): Request => ({ actor: { id: 'U0ALICE' }, via: 'cli', words, locale: 'en' });

  beforeAll(async () => {
    await seedFailure(prefix);
    ops = await createQueueOps({
      config: parseConfig(configYaml(configOf(dir, prefix)), {}),
      env: {},
      logger: silentLogger(),
    });
  });
  afterAll(async () => {
    await ops?.close();
    await deletePrefix(redis, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('ten mistyped retry ids and usage errors leave pause and ack usable', async () => {
    for (let i = 0; i < 10; i++) {
      const typo = await ops.dispatcher.handle(cli(['retry', 'pushizo/q0', `9999${i}`]));
      expect(typo.error?.code).toBe('UnknownJob');
    }
    expect((await ops.dispatcher.handle(cli(['pause']))).error?.code).toBe('UsageError');
    expect((await ops.dispatcher.handle(cli(['pause', 'pushizo/nope']))).error?.code).toBe('UnknownQueue');

    const paused = await ops.dispatcher.handle(cli(['pause', 'pushizo/q1']));
    expect(paused.ok, paused.message.text).toBe(true);
    // Refused because it is already paused: nothing ran, nothing counted.
    expect((await ops.dispatcher.handle(cli(['pause', 'pushizo/q1']))).error?.code).toBe('AlreadyInState');
    const [alert] = await insertStorm(ops, 1);
    const acked = await ops.dispatcher.handle(cli(['ack', alert!]));
    expect(acked.ok, acked.message.text).toBe(true);
  });

  it('still refuses the action after ten that ran, in one line', async () => {
    // One ran above (the pause); nine more run, the next is refused.
    for (let i = 2; i <= 10; i++) {
      const reply = await ops.dispatcher.handle(cli(['pause', `pushizo/q${i}`]));
      expect(reply.ok, reply.message.text).toBe(true);
    }
    const refused = await ops.dispatcher.handle(cli(['pause', 'pushizo/q11']));
    expect(refused.error?.code).toBe('RateLimited');
    expect(refused.message.text).toContain('You ran 10 commands that change things in the last minute');
    // ack is not counted even now.
    const [alert] = await insertStorm(ops, 1, 1);
    expect((await ops.dispatcher.handle(cli(['ack', alert!]))).ok).toBe(true);
  });
});

describe('the rate limit counts actions that ran (Slack, the real wiring)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qo-rate-ran-slack-'));
  const prefix = randomName('rrs');
  const API = 'https://slack-api.rate-ran.test';
  let bot: RunningBot;

  beforeAll(async () => {
    nock(API).persist().post(/.*/).reply(200, { ok: true, channel: 'C0INCIDENT', ts: '1.000001' });
    await seedFailure(prefix);
    bot = await startWiredBot({
      dir,
      config: configOf(dir, prefix),
      token: 'xoxb-rate',
      apiUrl: `${API}/api/`,
    });
  });
  afterAll(async () => {
    await bot?.stop();
    nock.cleanAll();
    await deletePrefix(redis, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  async function slash(text: string): Promise<string> {
    const path = `/commands/T0TEAM/${randomId('')}/rate`;
    const { bodies } = captureResponses(path);
    await bot.slack.app.processEvent({ body: slashCommand(text, path), ack: async () => {} });
    await bot.idle();
    return bodies.map((b) => String(b.text)).join('\n');
  }

  it('acknowledging an alert storm of 14 does not stop at the eleventh', async () => {
    const ids = await insertStorm(bot.runtime, 14);
    for (const id of ids) expect(await slash(`ack ${id}`)).toContain('acknowledged');
  });

  it('ten mistyped retry ids do not lock the user out of pause', async () => {
    for (let i = 0; i < 10; i++)
      expect(await slash(`retry pushizo/q0 8888${i}`)).not.toContain('did not run');
    // Pause runs (its answer is the request's outcome), not refused.
    const asked = await slash('pause pushizo/q12');
    expect(asked).toContain('Request: pause pushizo/q12');
    expect(asked).not.toContain('did not run');
  });
});
