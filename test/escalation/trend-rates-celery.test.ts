import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { parseConfig } from '../../src/config/load.js';
import type { CelerySystemConfig, Config } from '../../src/config/schema.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { type CeleryWorker, publishCelery, redisDbUrl, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, configYaml } from '../helpers/config-file.js';
import { plainMonitor } from '../helpers/plain-monitor.js';

/**
 * The rates of Celery queues in every monitor sample, from the result backend, through the
 * monitor's own ticks (real workers, a real SQLite store, no rule on throughput), then `trend` as
 * an operator types it. The bot counts results from the failure index it keeps anyway (its scan,
 * then the results Celery publishes), so a tick after the first reads no key to count them. An app
 * that stores results without their queue, or none at all, gets "unknown" and why, never 0.
 */
const ALARM = 'tr_alarm';
const OTA = 'tr_ota';

describe('trend rates of Celery queues', () => {
  const dir = tempDir('trend-rates-celery');
  const storeUrl = `sqlite:${join(dir.dir, 'queue-ops.db')}`;
  const configFile = join(dir.dir, 'queue-ops.yml');
  let redis: PrivateRedis;
  const workers: CeleryWorker[] = [];
  let zeus: string;
  let plain: string;
  let yaml: string;
  let config: Config;
  let store: Store;
  let stopMonitor: () => Promise<void>;
  let tick: () => Promise<unknown>;
  let zeusBackend: ReturnType<typeof createCeleryBackend>;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    zeus = redisDbUrl(redis.url, 0);
    // Another app on another DB of the same server, storing results without `result_extended`:
    // it publishes on the very channels zeus's results are published on.
    plain = redisDbUrl(redis.url, 1);
    yaml = configYaml({
      slack: { incidentChannel: 'C0INCIDENT' },
      store: storeUrl,
      roles: { viewer: ['*'] },
      systems: [
        celerySystem('zeus', zeus, { queues: [ALARM, OTA], inspectTimeoutMs: 1000 }),
        celerySystem('plain', plain, { queues: ['celery'], inspectTimeoutMs: 1000 }),
        celerySystem('empty', redisDbUrl(redis.url, 2), { queues: ['nothing'], inspectTimeoutMs: 300 }),
      ],
      escalation: { rules: [{ name: 'backlog', metric: 'waiting', above: 1000 }] },
    });
    writeFileSync(configFile, yaml);
    workers.push(
      await startCeleryWorker({ brokerUrl: zeus, queues: [ALARM, OTA], name: 'zeus-tr' }),
      await startCeleryWorker({
        brokerUrl: plain,
        queues: ['celery'],
        name: 'plain-tr',
        resultExtended: false,
      }),
    );
    await publishCelery({ brokerUrl: zeus }, [
      ...[1, 2, 3].map((n) => ({ task: 'tasks.add', args: [n, 1], queue: ALARM, wait: true })),
      { task: 'tasks.boom', args: ['gateway down'], queue: OTA, wait: true },
    ]);
    await publishCelery({ brokerUrl: plain }, [
      { task: 'tasks.add', args: [1, 1], queue: 'celery', wait: true },
    ]);

    // One monitor, as the bot runs it: its backends (and their failure index) live across ticks.
    config = parseConfig(yaml, {});
    store = await openStore(storeUrl);
    await store.migrate();
    const created = config.systems.map((s) => createCeleryBackend(s as CelerySystemConfig));
    zeusBackend = created[0]!;
    const backends = createBackendRegistry(created);
    const monitor = plainMonitor(config, store, backends, 'test');
    tick = () => monitor.tick();
    stopMonitor = async () => {
      await backends.close();
      await store.close();
    };
  }, 90_000);

  afterAll(async () => {
    await stopMonitor?.();
    for (const worker of workers) await worker.stop();
    await redis?.stop();
    dir.remove();
  });

  const cli = (...words: string[]) => runCliInProcess(['--config', configFile, ...words], { cwd: dir.dir });
  const lineOf = (stdout: string, label: string) => stdout.split('\n').find((l) => l.startsWith(`${label} `));

  it('counts the results of the last 5 minutes per queue, the later ones without reading a key', async () => {
    await tick();
    const admin = new Redis(zeus);
    const reads = async () => {
      const stats = await admin.info('commandstats');
      const calls = (name: string) =>
        Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return { scan: calls('scan'), get: calls('get') };
    };
    try {
      // Two more done after the first tick: the bot hears of them as Celery stores them. The other
      // app's result is published on the same channels, but its key is not in zeus's DB.
      await publishCelery({ brokerUrl: zeus }, [
        ...[4, 5].map((n) => ({ task: 'tasks.add', args: [n, 1], queue: ALARM, wait: true })),
      ]);
      await publishCelery({ brokerUrl: plain }, [
        { task: 'tasks.add', args: [2, 2], queue: 'celery', wait: true },
      ]);
      const before = await reads();
      await tick();
      const after = await reads();
      expect(after.scan - before.scan).toBe(0);
      expect(after.get - before.get).toBe(0);
    } finally {
      admin.disconnect();
    }
    const status = await zeusBackend.status(undefined, { throughput: { spanMs: 5 * 60_000, sample: 0 } });
    expect(status.queues.find((q) => q.name === ALARM)!.throughput).toMatchObject({
      completed: 5,
      failed: 0,
    });
    expect(status.warnings.map((w) => w.code)).not.toContain('ThroughputUnattributed');

    const run = await cli('trend', `zeus/${ALARM}`);
    expect(run.code, run.stderr).toBe(0);
    // Five done, none failed, in the 5 minutes before the second tick.
    expect(lineOf(run.stdout, 'done/min')).toMatch(/ 1\.0$/);
    expect(lineOf(run.stdout, 'failed/min')).toMatch(/ 0\.0$/);
    expect(run.stdout).toContain(
      'done/min and failed/min: jobs finished in the 5 minutes before each sample, from the result backend’s `date_done` (tasks with `ignore_result` are not counted).',
    );
    const ota = jsonOf(await cli('--json', 'trend', `zeus/${OTA}`));
    expect(ota.data).toMatchObject({
      samples: 2,
      latest: { throughput: 0, failedPerMinute: 0.2 },
      rates: { source: 'results', estimated: false, unknown: { completed: null, failed: null } },
    });
  }, 60_000);

  it('says why a rate is unknown: results without their queue, or no results at all', async () => {
    const plainTrend = await cli('trend', 'plain/celery');
    expect(plainTrend.code, plainTrend.stderr).toBe(0);
    expect(lineOf(plainTrend.stdout, 'done/min')).toMatch(/ \?$/);
    expect(plainTrend.stdout).toContain(
      'Done/min unknown: the stored results name no queue (set `result_extended=True` in the Celery app).',
    );
    const empty = jsonOf(await cli('--json', 'trend', 'empty/nothing'));
    expect(empty.data).toMatchObject({
      latest: { throughput: null, failedPerMinute: null },
      rates: { source: 'results', unknown: { completed: 'noResults', failed: 'noResults' } },
    });
    const emptyText = await cli('trend', 'empty/nothing');
    expect(emptyText.stdout).toContain(
      'Done/min unknown: the result backend holds no task results (the app stores none, or keeps them elsewhere).',
    );
  });
});
