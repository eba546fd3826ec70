import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { parseConfig } from '../../src/config/load.js';
import type { BullmqSystemConfig } from '../../src/config/schema.js';
import { openStore } from '../../src/store/open.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { queueTakenByHand } from '../helpers/bullmq-libs.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { plainMonitor } from '../helpers/plain-monitor.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * `trend` has the rates beside the depths whatever the rules: the monitor's own ticks (a real
 * SQLite store, no rule on throughput) over real BullMQ queues whose jobs a real Worker finished at
 * times the test set (Date only), then `trend` and `status` as an operator types them. A queue
 * that keeps no completed jobs says so instead of drawing 0; one whose workers collect metrics says
 * that is where its rate came from.
 */
const url = testRedisUrl();
const prefix = randomName('trr');
const T0 = Date.UTC(2030, 4, 6, 9, 0, 0);
const MINUTE = 60_000;

describe('trend rates from every monitor sample', () => {
  const dir = tempDir('trend-rates');
  const storeUrl = `sqlite:${join(dir.dir, 'queue-ops.db')}`;
  const configFile = join(dir.dir, 'queue-ops.yml');
  const yaml = configYaml({
    slack: { incidentChannel: 'C0INCIDENT' },
    store: storeUrl,
    roles: { viewer: ['*'] },
    systems: [bullmqSystem('pushizo', url, prefix, { queues: ['dispatch-ios', 'webhooks', 'events'] })],
    // Only depth rules: nothing asks for throughput, yet every sample has it.
    escalation: { rules: [{ name: 'backlog', queues: ['pushizo/*'], metric: 'waiting', above: 1000 }] },
  });
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    writeFileSync(configFile, yaml);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await scene();
    } finally {
      vi.useRealTimers();
    }
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await deletePrefix(url, prefix);
    dir.remove();
  });

  /** A queue and a worker that takes its jobs by hand, so each finishes when the test says. */
  function open(name: string, workerOptions: Record<string, unknown> = {}) {
    const { queue, worker } = queueTakenByHand(name, { url, prefix }, closers, workerOptions);
    return async (at: number, opts: { fail?: boolean; removeOnComplete?: boolean } = {}) => {
      vi.setSystemTime(at - 2000);
      await queue.add('send', { secret: 'payload' }, opts.removeOnComplete ? { removeOnComplete: true } : {});
      vi.setSystemTime(at - 1000);
      const token = randomName('tok');
      const job = await worker.getNextJob(token);
      if (!job) throw new Error(`no job to take in ${name}`);
      vi.setSystemTime(at);
      if (opts.fail) await job.moveToFailed(new Error('ProviderError: 503'), token, false);
      else await job.moveToCompleted('sent', token, false);
    };
  }

  /** One monitor tick at `at`, as the bot runs it, into the config's store. */
  async function tick(at: number) {
    vi.setSystemTime(at);
    const config = parseConfig(yaml, {});
    const store = await openStore(storeUrl);
    await store.migrate();
    const backends = createBackendRegistry([createBullmqBackend(config.systems[0] as BullmqSystemConfig)]);
    const monitor = plainMonitor(config, store, backends, 'test');
    try {
      const outcome = await monitor.tick();
      expect(outcome.leader).toBe(true);
    } finally {
      await backends.close();
      await store.close();
    }
  }

  /** The queues' jobs and three monitor ticks, 4 minutes apart, as in a quiet morning. */
  async function scene() {
    const ios = open('dispatch-ios');
    // Three done and one failed in the 5 minutes before the first tick: 0.6 and 0.2 a minute.
    for (const at of [T0 + 1 * MINUTE, T0 + 2 * MINUTE, T0 + 3.5 * MINUTE]) await ios(at);
    await ios(T0 + 2.5 * MINUTE, { fail: true });
    await tick(T0 + 4 * MINUTE);
    // Five done in the 5 minutes before the second (3.5, 5, 6, 6.5, 7), none failed: 1 and 0.
    for (const at of [T0 + 5 * MINUTE, T0 + 6 * MINUTE, T0 + 6.5 * MINUTE, T0 + 7 * MINUTE]) await ios(at);
    await tick(T0 + 8 * MINUTE);

    // Four done in the 5 minutes before the third (8.5, 9, 10, 11; 7 itself is not after 7): 0.8.
    for (const at of [T0 + 8.5 * MINUTE, T0 + 9 * MINUTE, T0 + 10 * MINUTE, T0 + 11 * MINUTE]) await ios(at);
    const webhooks = open('webhooks');
    for (const at of [T0 + 9 * MINUTE, T0 + 10 * MINUTE]) await webhooks(at, { removeOnComplete: true });
    await webhooks(T0 + 10.5 * MINUTE, { fail: true });
    const events = open('events', { metrics: { maxDataPoints: 60 }, removeOnComplete: { count: 0 } });
    for (const at of [T0 + 9 * MINUTE, T0 + 10 * MINUTE, T0 + 11 * MINUTE]) await events(at);
    await tick(T0 + 12 * MINUTE);
  }

  const cli = (...words: string[]) => runCliInProcess(['--config', configFile, ...words], { cwd: dir.dir });
  const lineOf = (stdout: string, label: string) => stdout.split('\n').find((l) => l.startsWith(`${label} `));

  it('draws done/min and failed/min for a queue that keeps its jobs, from the completed and failed sets', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 + 13 * MINUTE);
    const run = await cli('trend', 'pushizo/dispatch-ios');
    expect(run.code, run.stderr).toBe(0);
    expect(lineOf(run.stdout, 'done/min')).toMatch(/^done\/min\s+[▁▂▃▄▅▆▇█·]{40} 0\.8$/);
    expect(lineOf(run.stdout, 'failed/min')).toMatch(/^failed\/min\s+[▁▂▃▄▅▆▇█·]{40} 0\.0$/);
    expect(run.stdout).toContain(
      'done/min and failed/min: jobs finished in the 5 minutes before each sample, counted in the queue’s completed and failed sets by when they finished.',
    );
    expect(run.stdout).not.toContain('unknown');

    const json = jsonOf(await cli('--json', 'trend', 'pushizo/dispatch-ios'));
    expect(json.data).toMatchObject({
      samples: 3,
      latest: { throughput: 0.8, failedPerMinute: 0 },
      rates: { source: 'jobs', estimated: false, unknown: { completed: null, failed: null } },
    });
  });

  it('says done/min is unknown for a queue that keeps no completed jobs, never 0', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 + 13 * MINUTE);
    const run = await cli('trend', 'pushizo/webhooks');
    expect(run.code, run.stderr).toBe(0);
    expect(lineOf(run.stdout, 'done/min')).toMatch(/^done\/min\s+·{40} \?$/);
    expect(lineOf(run.stdout, 'failed/min')).toMatch(/ 0\.2$/);
    expect(run.stdout).toContain(
      'Done/min unknown: the queue keeps no completed jobs to count (`removeOnComplete: true`, or none completed yet) and its workers collect no metrics.',
    );
    const json = jsonOf(await cli('--json', 'trend', 'pushizo/webhooks'));
    expect(json.data).toMatchObject({
      latest: { throughput: null, failedPerMinute: 0.2 },
      rates: { source: 'jobs', unknown: { completed: 'notKept', failed: null } },
    });

    // `status` says the same: a `?`, with the reason for the one queue, and null in --json.
    const status = jsonOf(await cli('--json', 'status', 'pushizo'));
    const queues = (status.data as { systems: { queues: { name: string; throughput: unknown }[] }[] })
      .systems[0]!.queues;
    expect(queues.find((q) => q.name === 'webhooks')!.throughput).toMatchObject({
      completedPerMinute: null,
      completed: null,
      failedPerMinute: 0.2,
      unknown: { completed: 'notKept' },
    });
    const one = await cli('status', 'pushizo/webhooks');
    expect(one.stdout).toContain('? done/min, 0.2 failed/min');
    expect(one.stdout).toContain('Done/min unknown: the queue keeps no completed jobs to count');
  });

  it('says the rate of a queue whose workers collect metrics came from them', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 + 13 * MINUTE);
    const run = await cli('trend', 'pushizo/events');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('from BullMQ’s own per-minute metrics');
    // Three jobs in minutes 9, 10 and 11, counted in BullMQ's whole minutes 8 to 12 that cover
    // the 5 minutes before the tick at 12:00: 3 over 4 minutes.
    expect(lineOf(run.stdout, 'done/min')).toMatch(/ 0\.8$/);
    const json = jsonOf(await cli('--json', 'trend', 'pushizo/events'));
    expect(json.data).toMatchObject({ latest: { throughput: 0.75 }, rates: { source: 'metrics' } });
  });
});
