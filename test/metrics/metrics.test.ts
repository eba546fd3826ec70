import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BullmqBackend } from '../../src/backends/bullmq/index.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, runCli, runCliInProcess } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { parsePrometheusText } from '../helpers/prom-text.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { sampleAlert } from '../store/escalation-contract.js';
import { startWiredBot } from '../transports/slack/harness.js';

const url = testRedisUrl();
const dir = mkdtempSync(join(tmpdir(), 'qo-metrics-'));
const prefix = randomName('met');

let fakeSlack: Server;
let bot: RunningBot;
let base: string;
let configFile: string;
// Zeus, a Celery system on a Redis of its own (pidbox replies and result keys are per database).
let celeryRedis: PrivateRedis;
let celeryWorker: CeleryWorker;
const CELERY_QUEUE = 'metrics_alarm';
const CELERY_FAILING = 'metrics_ota';

async function get(path: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

beforeAll(async () => {
  fakeSlack = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0TEAM' }));
  });
  await new Promise<void>((resolve) => fakeSlack.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(fakeSlack.address() as AddressInfo).port}/api/`;

  const connection = connectionFor(url);
  const dispatch = new Queue('dispatch-ios', { prefix, connection });
  await dispatch.addBulk([1, 2, 3, 4, 5].map((n) => ({ name: 'push', data: { n } })));
  await dispatch.add('later', {}, { delay: 3_600_000 });
  await dispatch.close();
  const events = new Queue('events', { prefix, connection });
  await events.add('track', {});
  await events.pause();
  await events.close();

  // Four messages waiting (two of them on a priority list), two real failures stored by a real
  // worker that stays up (it consumes only the failing queue, so the waiting ones stay).
  celeryRedis = await startPrivateRedis();
  const brokerUrl = `${celeryRedis.url}/0`;
  celeryWorker = await startCeleryWorker({ brokerUrl, queues: [CELERY_FAILING], name: 'zeus-metrics' });
  await publishCelery(
    { brokerUrl },
    [1, 2].map((n) => ({
      task: 'tasks.boom',
      args: [`gateway ${n} down`],
      queue: CELERY_FAILING,
      wait: true,
    })),
  );
  await publishCelery(
    { brokerUrl },
    [0, 0, 6, 6].map((priority, n) => ({ task: 'tasks.add', args: [n, 1], queue: CELERY_QUEUE, priority })),
  );

  configFile = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    metrics: { cacheSeconds: 0 },
    roles: { viewer: ['*'], operator: ['U0OPS1', 'U0OPS2'] },
    policies: { pause: { role: 'operator', approvals: 1 } },
    systems: [
      bullmqSystem('pushizo', url, prefix),
      {
        name: 'zeus',
        type: 'celery',
        redis: brokerUrl,
        queues: [CELERY_QUEUE, CELERY_FAILING],
        inspectTimeoutMs: 1500,
      },
      bullmqSystem('down', 'redis://127.0.0.1:1'),
    ],
  });
  bot = await startWiredBot({
    dir,
    configFile,
    token: 'xoxb-metrics',
    apiUrl,
    http: { signingSecret: 'metrics-secret' },
    seams: { metricsOptions: { processMetrics: true } },
    stderr: () => {},
  });
  base = `http://127.0.0.1:${bot.port}`;
});

afterAll(async () => {
  await bot?.stop();
  await new Promise((resolve) => fakeSlack?.close(resolve));
  await celeryWorker?.stop();
  await celeryRedis?.stop();
  await deletePrefix(url, prefix);
  rmSync(dir, { recursive: true, force: true });
});

describe('/metrics, /readyz and /healthz', () => {
  it('exports queue depth that agrees with --json status, in Prometheus text format', async () => {
    const scraped = await get('/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.type).toContain('text/plain');
    const families = parsePrometheusText(scraped.body);
    const jobs = families.get('queue_ops_queue_jobs');
    expect(jobs?.type).toBe('gauge');
    await expectAgreementWithStatus(families, 'pushizo');
    const waiting = (q: string) =>
      jobs?.samples.find((s) => s.labels.queue === q && s.labels.state === 'waiting')?.value;
    expect(waiting('dispatch-ios')).toBe(5);
    expect(
      jobs?.samples.find((s) => s.labels.queue === 'dispatch-ios' && s.labels.state === 'delayed')?.value,
    ).toBe(1);
    expect(
      families.get('queue_ops_queue_paused')?.samples.find((s) => s.labels.queue === 'events')?.value,
    ).toBe(1);
    expect(
      families
        .get('queue_ops_queue_oldest_waiting_seconds')
        ?.samples.find((s) => s.labels.queue === 'dispatch-ios')?.value,
    ).toBeGreaterThanOrEqual(0);
    expect(families.get('queue_ops_redis_memory_used_bytes')?.samples[0]?.value).toBeGreaterThan(0);
    // A system whose Redis is down is exported as down, and the scrape still succeeds.
    const up = families.get('queue_ops_system_up')?.samples ?? [];
    expect(Object.fromEntries(up.map((s) => [s.labels.system, s.value]))).toEqual({
      pushizo: 1,
      zeus: 1,
      down: 0,
    });
    // Node's own process metrics.
    expect(families.has('process_cpu_user_seconds_total')).toBe(true);
    expect(families.has('nodejs_eventloop_lag_seconds')).toBe(true);
    // Conventions: the prefix, base units, _total counters.
    for (const [name, family] of families) {
      if (!name.startsWith('queue_ops_')) continue;
      expect(name).not.toMatch(/_(ms|milliseconds|kb|mb)\b/);
      if (family.type === 'counter') expect(name, name).toMatch(/_total$/);
      else expect(name, name).not.toMatch(/_total$/);
      if (/duration|latency|_age|oldest/.test(name)) expect(name, name).toMatch(/_seconds(_|$)/);
      if (/memory/.test(name)) expect(name, name).toMatch(/_bytes$/);
    }
  });

  it('exports Celery queues, failures and workers that agree with --json status too', async () => {
    const families = parsePrometheusText((await get('/metrics')).body);
    const status = await expectAgreementWithStatus(families, 'zeus');
    const value = (name: string, labels: Record<string, string>) =>
      families.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        ?.value;
    const jobs = (queue: string, state: string) =>
      value('queue_ops_queue_jobs', { system: 'zeus', queue, state });
    expect(jobs(CELERY_QUEUE, 'waiting')).toBe(4);
    expect(jobs(CELERY_FAILING, 'failed')).toBe(2);
    expect(jobs(CELERY_FAILING, 'waiting')).toBe(0);
    expect(value('queue_ops_workers', { system: 'zeus' })).toBe(1);
    expect(status.workers).toHaveLength(1);
    // Celery messages carry no enqueue time: the age is the monitor's stored sighting, the same one
    // `status` reads, so it is exported once a monitor has ticked (absent before: unknown).
    const ticked = await runCliInProcess(['--config', configFile, 'monitor', '--once']);
    expect(ticked.code, ticked.stderr).toBe(0);
    let oldest: number | undefined;
    for (let tries = 0; tries < 10 && oldest === undefined; tries++) {
      const scraped = parsePrometheusText((await get('/metrics')).body);
      oldest = scraped
        .get('queue_ops_queue_oldest_waiting_seconds')
        ?.samples.find((s) => s.labels.system === 'zeus' && s.labels.queue === CELERY_QUEUE)?.value;
      if (oldest === undefined) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(oldest).toBeGreaterThanOrEqual(0);
    expect(value('queue_ops_redis_memory_used_bytes', { system: 'zeus' })).toBeGreaterThan(0);
  }, 30_000);

  it('counts commands by verb in a latency histogram, and audit entries written', async () => {
    const res = await fetch(`${base}/slack/events`, { method: 'POST' });
    expect(res.status).toBeGreaterThanOrEqual(400); // unsigned: refused, not counted
    await bot.runtime.dispatcher.handle({
      actor: { id: 'U0VIEW', name: 'vic' },
      via: 'cli',
      words: ['status', 'pushizo'],
      locale: 'en',
    });
    await bot.runtime.audit.flush();
    const families = parsePrometheusText((await get('/metrics')).body);
    const histogram = families.get('queue_ops_command_duration_seconds');
    expect(histogram?.type).toBe('histogram');
    expect(
      histogram?.samples.find((s) => s.name.endsWith('_count') && s.labels.verb === 'status')?.value,
    ).toBe(1);
    expect(families.get('queue_ops_audit_entries_total')?.samples[0]?.value).toBeGreaterThanOrEqual(1);
  });

  it('shares one Redis read among concurrent scrapes and status calls', async () => {
    const backend = bot.runtime.backends.get('pushizo') as BullmqBackend;
    const before = backend.stats().roundTrips;
    await Promise.all([
      ...Array.from({ length: 10 }, () => get('/metrics')),
      ...Array.from({ length: 10 }, () => backend.status()),
    ]);
    const spent = backend.stats().roundTrips - before;
    // Alone, twenty reads would be twenty round trips; shared, one or two (a scrape that starts
    // after the first read finished begins the next).
    expect(spent).toBeGreaterThanOrEqual(1);
    expect(spent).toBeLessThanOrEqual(3);
  });

  it('counts actions and approvals from the audit trail, by action and outcome', async () => {
    const families = async () => parsePrometheusText((await get('/metrics')).body);
    const count = (f: Awaited<ReturnType<typeof families>>, name: string, labels: Record<string, string>) =>
      f.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ??
      0;
    const before = await families();
    const asked = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0OPS1' },
      via: 'cli',
      words: ['pause', 'pushizo/dispatch-ios'],
      locale: 'en',
    });
    const id = (asked.data as { request: { id: string } }).request.id;
    const approved = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0OPS2' },
      via: 'cli',
      words: ['approve', id],
      locale: 'en',
    });
    expect(approved.ok, JSON.stringify(approved.error)).toBe(true);
    await bot.runtime.audit.flush();
    const after = await families();
    const delta = (name: string, labels: Record<string, string>) =>
      count(after, name, labels) - count(before, name, labels);
    expect(after.get('queue_ops_actions_total')?.type).toBe('counter');
    expect(delta('queue_ops_approvals_total', { action: 'pause', outcome: 'requested' })).toBe(1);
    expect(delta('queue_ops_approvals_total', { action: 'pause', outcome: 'approved' })).toBe(1);
    expect(delta('queue_ops_actions_total', { action: 'pause', outcome: 'done' })).toBe(1);
    // The pause is real: the next scrape sees the queue paused.
    expect(
      after.get('queue_ops_queue_paused')?.samples.find((s) => s.labels.queue === 'dispatch-ios')?.value,
    ).toBe(1);
  });

  it('exports workers, the memory limit, open alerts by severity and the outbox depth', async () => {
    const worker = new Worker('events', null, { connection: connectionFor(url), prefix, autorun: false });
    await worker.waitUntilReady();
    // A worker shows in CLIENT LIST once its blocking connection has a name.
    await worker.getNextJob('metrics-token').catch(() => undefined);
    const alerts = bot.runtime.store.escalation;
    const openBefore = parsePrometheusText((await get('/metrics')).body);
    const severity = (f: typeof openBefore, s: string) =>
      f.get('queue_ops_alerts_open')?.samples.find((x) => x.labels.severity === s)?.value ?? 0;
    await alerts.insertAlert(sampleAlert({ key: 'metrics|pushizo/a', severity: 'critical' }), [
      { kind: 'post', payload: {} },
    ]);
    await alerts.insertAlert(sampleAlert({ key: 'metrics|pushizo/b', severity: 'warning' }), [
      { kind: 'post', payload: {} },
    ]);
    const families = parsePrometheusText((await get('/metrics')).body);
    const status = jsonOf(await runCli(['--config', configFile, '--json', 'status', 'pushizo'])).data as {
      systems: { redis: { maxMemoryBytes: number }; workers: unknown[] }[];
    };
    const perSystem = (name: string) =>
      Object.fromEntries((families.get(name)?.samples ?? []).map((s) => [s.labels.system, s.value]));
    expect(perSystem('queue_ops_workers').pushizo).toBeGreaterThanOrEqual(1);
    expect(perSystem('queue_ops_workers').pushizo).toBe(status.systems[0]!.workers.length);
    expect(perSystem('queue_ops_redis_memory_max_bytes').pushizo).toBe(
      status.systems[0]!.redis.maxMemoryBytes,
    );
    expect(severity(families, 'critical') - severity(openBefore, 'critical')).toBe(1);
    expect(severity(families, 'warning') - severity(openBefore, 'warning')).toBe(1);
    expect(families.get('queue_ops_outbox_depth')?.samples[0]?.value).toBeGreaterThanOrEqual(2);
    await worker.close();
  });

  it('is ready with the store reachable and Slack listening, even though a watched Redis is down', async () => {
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({
      ready: true,
      store: 'ok',
      slack: 'connected',
      systems: { pushizo: 'up', zeus: 'up', down: 'down' },
    });
    expect((await get('/healthz')).status).toBe(200);
  });

  it('is not ready when its store is unreachable, and says which part, without credentials', async () => {
    await bot.runtime.store.close();
    await waitFor('readyz to fail', async () => (await get('/readyz')).status === 503);
    const body = (await get('/readyz')).body;
    expect(JSON.parse(body)).toMatchObject({ ready: false, store: 'unreachable', slack: 'connected' });
    expect(body).not.toContain('xoxb');
    expect(body).not.toContain(dir);
  });
});

interface StatusSystem {
  name: string;
  queues: (Record<string, unknown> & { name: string; oldestWaitingSeconds?: number | null })[];
  workers: unknown[];
}

/** Every queue and state of one system, scraped and from `--json status`, is the same number. */
async function expectAgreementWithStatus(
  families: ReturnType<typeof parsePrometheusText>,
  systemName: string,
): Promise<StatusSystem> {
  const cli = jsonOf(await runCli(['--config', configFile, '--json', 'status', systemName]));
  const system = (cli.data as { systems: StatusSystem[] }).systems[0]!;
  expect(system.name).toBe(systemName);
  expect(system.queues.length).toBeGreaterThan(0);
  const jobs = families.get('queue_ops_queue_jobs');
  for (const queue of system.queues) {
    for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed']) {
      const sample = jobs?.samples.find(
        (s) => s.labels.system === systemName && s.labels.queue === queue.name && s.labels.state === state,
      );
      expect(sample?.value, `${systemName} ${queue.name} ${state}`).toBe(queue[state] ?? 0);
    }
  }
  return system;
}
