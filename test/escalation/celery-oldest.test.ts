import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { parseConfig } from '../../src/config/load.js';
import type { CelerySystemConfig } from '../../src/config/schema.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { openStore } from '../../src/store/open.js';
import { publishCelery, redisDbUrl } from '../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, configYaml } from '../helpers/config-file.js';
import { plainMonitor } from '../helpers/plain-monitor.js';

/**
 * Issue 38 §1: a Celery queue's age is the monitor's stored sighting of its head message, one
 * source for `status` and the alerts, kept across restarts. Seeded with real Celery messages (no
 * worker consumes them), a monitor tick 93 minutes ago sees the head; a fresh command line (a new
 * process's backends, a new store handle) then shows `≥ 1h 33m` and since when, never `0s`, and
 * the alert line gives its unit.
 */
const ALARM = 'celery:alarm_processing';
const OTHER = 'celery:ota_processing';
const AGO_MS = 93 * 60_000;

interface StatusQueue {
  name: string;
  oldestWaitingSeconds: number | null;
  oldestWaitingFrom: string | null;
}

describe('Celery oldest waiting: the monitor stored sighting, read by a fresh status', () => {
  const dir = tempDir('celery-oldest');
  const storeUrl = `sqlite:${join(dir.dir, 'queue-ops.db')}`;
  const configFile = join(dir.dir, 'queue-ops.yml');
  let redis: PrivateRedis;
  let zeus: string;
  let yaml: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    zeus = redisDbUrl(redis.url, 0);
    yaml = configYaml({
      slack: { incidentChannel: 'C0INCIDENT' },
      store: storeUrl,
      roles: { viewer: ['*'] },
      systems: [celerySystem('zeus', zeus, { queues: [ALARM, OTHER], inspectTimeoutMs: 300 })],
    });
    writeFileSync(configFile, yaml);
    await publishCelery({ brokerUrl: zeus }, [
      ...[1, 2, 3].map((n) => ({ task: 'tasks.add', args: [n, 1], queue: ALARM })),
    ]);
  }, 60_000);

  afterAll(async () => {
    await redis?.stop();
    dir.remove();
  });

  const cli = (...words: string[]) => runCliInProcess(['--config', configFile, ...words], { cwd: dir.dir });
  const queueOf = (data: unknown, name: string) =>
    (data as { systems: { queues: StatusQueue[] }[] }).systems[0]!.queues.find((q) => q.name === name)!;

  /** One monitor tick, as the bot makes it, with its own backends and store handle, at `at`. */
  async function tickAt(at: number) {
    const config = parseConfig(yaml, {});
    const store = await openStore(storeUrl);
    await store.migrate();
    const backends = createBackendRegistry(
      config.systems.map((s) => createCeleryBackend(s as CelerySystemConfig)),
    );
    try {
      return await plainMonitor(config, store, backends, 'test', () => new Date(at)).tick();
    } finally {
      await backends.close();
      await store.close();
    }
  }

  it('is unknown before any monitor sample has seen the head, never 0s', async () => {
    const run = await cli('status', 'zeus', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(queueOf(jsonOf(run).data, ALARM)).toMatchObject({
      oldestWaitingSeconds: null,
      oldestWaitingFrom: null,
    });
    const text = await cli('status', 'zeus');
    const row = text.stdout.split('\n').find((l) => l.includes(`${ALARM} `))!;
    expect(row).toContain('unknown');
    expect(row).not.toMatch(/\b0s\b/);
    expect(text.stdout).toContain('no monitor sample has seen');
  }, 60_000);

  it('counts from the monitor first sighting, in a new process, with since when', async () => {
    const seenAt = Date.now() - AGO_MS;
    await tickAt(seenAt);
    const run = await cli('status', 'zeus', '--json');
    expect(run.code, run.stderr).toBe(0);
    const alarm = queueOf(jsonOf(run).data, ALARM);
    expect(alarm.oldestWaitingFrom).toBe('firstSeen');
    expect(alarm.oldestWaitingSeconds).toBeGreaterThanOrEqual(AGO_MS / 1000);
    expect(alarm.oldestWaitingSeconds).toBeLessThan(AGO_MS / 1000 + 120);
    // Nothing waits on the other queue: no age, and nothing said about where it comes from.
    expect(queueOf(jsonOf(run).data, OTHER)).toMatchObject({
      oldestWaitingSeconds: null,
      oldestWaitingFrom: null,
    });

    const text = await cli('status', 'zeus');
    const row = text.stdout.split('\n').find((l) => l.includes(`${ALARM} `))!;
    expect(row).toContain('≥ 1h 33m');
    const since = new Date(seenAt).toISOString().slice(11, 16);
    expect(text.stdout).toContain(`${ALARM}\` at `);
    expect(text.stdout).toContain(since);

    const trFile = join(dir.dir, 'queue-ops.tr.yml');
    writeFileSync(trFile, `locale: tr\n${yaml}`);
    const tr = await runCliInProcess(['--config', trFile, 'status', 'zeus'], { cwd: dir.dir });
    expect(tr.code, tr.stderr).toBe(0);
    expect(tr.stdout).toContain('≥ 1 sa 33 dk');
    expect(tr.stdout).toContain('ilk kez gördü');
  }, 60_000);

  it('a later tick keeps the sighting; the alert line says the unit', async () => {
    const outcome = await tickAt(Date.now());
    expect(outcome.leader).toBe(true);
    const run = await cli('alerts');
    expect(run.code, run.stderr).toBe(0);
    const line = run.stdout.split('\n').find((l) => l.includes('alarm-latency'))!;
    expect(run.stdout).toContain('alarm-latency');
    // "5,580" alone left the reader to guess seconds or jobs.
    expect(line).toMatch(/5,5\d\d s \(1h 33m\)/);
  }, 60_000);
});
