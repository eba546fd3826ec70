import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { runCliInProcess } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { type LoopbackSlack, startLoopbackSlack } from '../helpers/loopback-slack.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { startWiredBot } from '../transports/slack/harness.js';

/**
 * A bot with nowhere to post alerts (no `slack.incidentChannel`, no system `alertChannel`) runs no
 * monitor tick, yet a `concurrency … --for` it set must still end when its time is up: the
 * monitor's lease picks the one replica that lifts it, and the audit trail says so. Before, the
 * lift ran only inside the monitor's tick, so such a bot kept the limit for good.
 */
const redisUrl = testRedisUrl();
const prefix = randomName('noalert');
const dir = mkdtempSync(join(tmpdir(), 'qo-expiry-no-alerts-'));
let configFile: string;
let clock = Date.parse('2030-02-01T10:00:00.000Z');
let slack: LoopbackSlack;
let bot: RunningBot;
let redis: Redis;
let queue: Queue;

beforeAll(async () => {
  slack = await startLoopbackSlack();
  queue = new Queue('sends', { connection: connectionFor(redisUrl), prefix });
  await queue.add('send', {});
  redis = new Redis(redisUrl);
  configFile = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: ['sends'] })],
    slack: { allowedChannels: ['C0OPS'] },
    roles: { viewer: ['*'], operator: ['U0ALICE'] },
    policies: { concurrency: { role: 'operator', approvals: 0 } },
    escalation: { intervalSeconds: 1 },
  });
  bot = await startWiredBot({
    dir,
    configFile,
    token: 'xoxb-no-alerts',
    apiUrl: slack.url,
    seams: { now: () => new Date(clock) },
    stderr: () => {},
  });
});

afterAll(async () => {
  await bot?.stop();
  await slack?.close();
  await queue?.close();
  redis?.disconnect();
  await deletePrefix(redisUrl, prefix);
  rmSync(dir, { recursive: true, force: true });
});

describe('a --for limit in a bot that posts no alerts', () => {
  it('is lifted when its time is up, audited as limit.expired, with no monitor tick', async () => {
    const set = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'slack',
      channel: 'C0OPS',
      words: ['concurrency', 'pushizo/sends', '3', '--for', '1m'],
      locale: 'en',
    });
    expect(set.ok, JSON.stringify(set)).toBe(true);
    expect(await redis.hget(`${prefix}:sends:meta`, 'concurrency')).toBe('3');

    clock += 2 * 60_000;
    await vi.waitFor(async () => expect(await redis.hget(`${prefix}:sends:meta`, 'concurrency')).toBeNull(), {
      timeout: 20_000,
      interval: 200,
    });
    const entries = await bot.runtime.store.listAudit({ limit: 50 });
    const expired = entries.filter((e) => e.action === 'limit.expired');
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ target: 'pushizo/sends', outcome: 'done' });
    // No tick ran: nothing was sampled, so no alert could have opened.
    expect(await bot.runtime.store.escalation!.listSamples(new Date(0).toISOString())).toEqual([]);
  });

  it('leaves the monitor’s own lease free: a monitor --once beside it samples', async () => {
    const once = await runCliInProcess(['--config', configFile, '--json', 'monitor', '--once']);
    expect(once.code, once.stderr).toBe(0);
    expect(JSON.parse(once.stdout).data).toMatchObject({ leader: true });
    expect(await bot.runtime.store.escalation!.listSamples(new Date(0).toISOString())).toHaveLength(1);
  });
});
