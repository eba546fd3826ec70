import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { runCli } from '../../src/transports/cli/run.js';
import { type CeleryWorker, startCeleryWorker } from '../helpers/celery-worker.js';
import { celerySystem, writeConfigFile } from '../helpers/config-file.js';

/**
 * Two of the runbook's escalations, as the monitor sees them with its default rules:
 * "Redis veri bozulması" (a background save that fails: `redis-persistence`) and "Worker crash
 * loop" (a Celery worker that dies and comes back under the same name: `worker-crash-loop`).
 * Real Redis servers of the test's own and a real Celery worker; `monitor --once` as cron runs it.
 */
const dir = mkdtempSync(join(tmpdir(), 'queue-ops-escalations-'));
let redis: PrivateRedis;
let client: Redis;
let config: string;

/** Whether this machine lets the test make a directory immutable (root and a file system with chattr). */
function canChattr(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'queue-ops-chattr-'));
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  client = new Redis(redis.url);
  config = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'queue-ops.db')}`,
    systems: [celerySystem('zeus', redis.url, { queues: ['celery'], inspectTimeoutMs: 1500 })],
    // The default rules (no `rules:`): the ones the seeds' escalation section asks for.
    escalation: { groupBy: 'none', clearAfterSamples: 1 },
  });
});

afterAll(async () => {
  client?.disconnect();
  try {
    execFileSync('chattr', ['-i', redis.dir], { stdio: 'ignore' });
  } catch {
    // never made immutable
  }
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Firing {
  id: string;
  rule: string;
  subject: string;
  value: number;
}

async function once(): Promise<{ firing: Firing[]; opened: string[]; resolved: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli({
    argv: ['--config', config, 'monitor', '--once', '--json'],
    env: {},
    cwd: dir,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    osUser: 'cron',
  });
  expect(code, err.join('')).toBe(0);
  return JSON.parse(out.join('')).data;
}

const rulesOf = (firing: Firing[]) => firing.map((a) => a.rule).sort();

describe.skipIf(!canChattr())('redis-persistence: a failed background save escalates', () => {
  it('fires while BGSAVE fails (its directory immutable), and resolves once a save succeeds', async () => {
    expect(rulesOf((await once()).firing)).not.toContain('redis-persistence');

    execFileSync('chattr', ['+i', redis.dir]);
    await client.bgsave();
    await expect
      .poll(async () => /rdb_last_bgsave_status:err/.test(await client.info('persistence')), {
        timeout: 10_000,
      })
      .toBe(true);
    const failing = await once();
    const alert = failing.firing.find((a) => a.rule === 'redis-persistence');
    expect(alert).toMatchObject({ subject: 'zeus', value: 1 });
    expect(failing.opened).toHaveLength(1);

    execFileSync('chattr', ['-i', redis.dir]);
    await client.bgsave();
    await expect
      .poll(async () => /rdb_last_bgsave_status:ok/.test(await client.info('persistence')), {
        timeout: 10_000,
      })
      .toBe(true);
    const saved = await once();
    expect(rulesOf(saved.firing)).not.toContain('redis-persistence');
    expect(saved.resolved).toEqual([alert!.id]);
  }, 60_000);
});

describe('worker-crash-loop: a Celery worker restarting under the same name', () => {
  const workers: CeleryWorker[] = [];
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
  });

  it('counts each restart as churn (its pid, from stats), and the default rule fires after two', async () => {
    const start = async () => {
      const worker = await startCeleryWorker({
        brokerUrl: redis.url,
        queues: ['celery'],
        name: 'loop@zeus-1',
      });
      workers.push(worker);
      return worker;
    };
    let worker = await start();
    expect(rulesOf((await once()).firing)).not.toContain('worker-crash-loop');
    const churn = async () => {
      const ticked = await once();
      return { firing: ticked.firing.find((a) => a.rule === 'worker-crash-loop') };
    };
    // Killed and started again under the same name: one leaving and one arriving each time.
    await worker.stop();
    worker = await start();
    expect((await churn()).firing).toBeUndefined();
    await worker.stop();
    worker = await start();
    const second = (await churn()).firing;
    // 2 per restart within 5m, above 3 (plus 1 when this file's first test sampled zeus with no worker).
    expect(second).toMatchObject({ subject: 'zeus' });
    expect([4, 5]).toContain(second!.value);
  }, 120_000);
});
