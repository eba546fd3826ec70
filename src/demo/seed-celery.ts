import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { CeleryQueuePlan, DemoPlan } from './plan.js';

/** Debian's python3-celery lives here; the demo never picks up a virtualenv's by accident. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

const SEP = '\x06\x16';
const PRIORITY_STEPS = [0, 3, 6, 9] as const;
const APP_DIR = join(dirname(fileURLToPath(import.meta.url)), 'celery');

/** True when `python3 -c 'import celery'` works. */
export function celeryAvailable(python = SYSTEM_PYTHON): boolean {
  const result = spawnSync(python, ['-c', 'import celery'], { stdio: 'ignore', timeout: 15_000 });
  return result.status === 0;
}

/** kombu's `_q_for_pri`: step 0 is the queue itself, others are `queue\x06\x16<step>`. */
export function priorityKey(queue: string, step: number): string {
  return step === 0 ? queue : `${queue}${SEP}${step}`;
}

/**
 * One task message exactly as Celery 5 (protocol 2, json) publishes it to Redis: the envelope of
 * queue-wire-formats.md A2, body = base64(JSON [args, kwargs, embed]).
 */
export function celeryEnvelope(options: {
  queue: string;
  task: string;
  args: unknown[];
  kwargs?: Record<string, unknown>;
  priority: number;
  id?: string;
  origin?: string;
}): string {
  const id = options.id ?? randomUUID();
  const kwargs = options.kwargs ?? {};
  const body = Buffer.from(
    JSON.stringify([options.args, kwargs, { callbacks: null, errbacks: null, chain: null, chord: null }]),
  ).toString('base64');
  return JSON.stringify({
    body,
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    headers: {
      lang: 'py',
      task: options.task,
      id,
      shadow: null,
      eta: null,
      expires: null,
      group: null,
      group_index: null,
      retries: 0,
      timelimit: [null, null],
      root_id: id,
      parent_id: null,
      argsrepr: `(${options.args.map((a) => JSON.stringify(a).replace(/"/g, "'")).join(', ')}${options.args.length === 1 ? ',' : ''})`,
      kwargsrepr: JSON.stringify(kwargs).replace(/"/g, "'"),
      origin: options.origin ?? 'gen3142@zeus-backend',
      ignore_result: false,
    },
    properties: {
      correlation_id: id,
      reply_to: randomUUID(),
      delivery_mode: 2,
      delivery_info: { exchange: '', routing_key: options.queue },
      priority: options.priority,
      body_encoding: 'base64',
      delivery_tag: randomUUID(),
    },
  });
}

/** `2026-11-29T07:03:21.874833`: Celery's naive UTC `date_done`, with microseconds. */
function celeryDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}${String(Math.floor(Math.random() * 1000)).padStart(3, '0')}`;
}

/** A FAILURE meta exactly as Celery 5.2 with `result_extended=True` writes it (A6). */
export function failureMeta(options: {
  id: string;
  task: string;
  queue: string;
  error: string;
  retries: number;
  args: unknown[];
  worker: string;
  at: number;
}): string {
  const colon = options.error.indexOf(': ');
  const excType = colon > 0 ? options.error.slice(0, colon) : 'Exception';
  const excMessage = colon > 0 ? options.error.slice(colon + 2) : options.error;
  const module = ['ConnectionError', 'TimeoutError', 'ValueError'].includes(excType)
    ? 'builtins'
    : 'zeus_demo';
  return JSON.stringify({
    status: 'FAILURE',
    result: { exc_type: excType, exc_message: [excMessage], exc_module: module },
    traceback: `Traceback (most recent call last):\n  File "/usr/lib/python3/dist-packages/celery/app/trace.py", line 451, in trace_task\n    R = retval = fun(*args, **kwargs)\n${module === 'builtins' ? '' : `${module}.`}${excType}: ${excMessage}\n`,
    children: [],
    date_done: celeryDate(options.at),
    name: options.task,
    args: options.args,
    kwargs: { fail: true },
    worker: options.worker,
    retries: options.retries,
    queue: options.queue,
    task_id: options.id,
  });
}

/** LPUSHes per priority list, many messages per command and many commands per pipeline. */
async function pushBacklog(redis: Redis, queues: CeleryQueuePlan[]): Promise<void> {
  const BATCH = 500;
  for (const q of queues) {
    await redis.sadd(`_kombu.binding.${q.name}`, `${q.name}${SEP}${SEP}${q.name}`);
    for (const [i, step] of PRIORITY_STEPS.entries()) {
      const count = q.byPriority[i] ?? 0;
      const key = priorityKey(q.name, step);
      let pipeline = redis.pipeline();
      let pending = 0;
      for (let start = 0; start < count; start += BATCH) {
        const values: string[] = [];
        for (let n = start; n < Math.min(count, start + BATCH); n++) {
          values.push(
            celeryEnvelope({ queue: q.name, task: q.task, args: [`dev-${n.toString(36)}`], priority: step }),
          );
        }
        pipeline.lpush(key, ...values);
        if (++pending === 20) {
          await pipeline.exec();
          pipeline = redis.pipeline();
          pending = 0;
        }
      }
      if (pending > 0) await pipeline.exec();
    }
  }
}

/** Failures written straight into the result backend when no Celery is installed. */
async function writeFailureMetas(redis: Redis, queues: CeleryQueuePlan[], worker: string): Promise<void> {
  const pipeline = redis.pipeline();
  const now = Date.now();
  let n = 0;
  for (const q of queues) {
    for (const failure of q.failures) {
      for (let i = 0; i < failure.count; i++) {
        const id = randomUUID();
        pipeline.setex(
          `celery-task-meta-${id}`,
          86_400,
          failureMeta({
            id,
            task: failure.task,
            queue: q.name,
            error: failure.error,
            retries: failure.attempts - 1,
            args: [`dev-${String(i).padStart(5, '0')}`],
            worker,
            at: now - 60_000 * 20 + 1000 * n++,
          }),
        );
      }
    }
  }
  await pipeline.exec();
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Runs a child to completion without blocking the event loop (the BullMQ seeding runs meanwhile). */
function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: error.message });
    });
  });
}

export interface SeededCelery {
  mode: 'real' | 'simulated';
  workers: string[];
  stop(): Promise<void>;
}

/**
 * Fills the zeus system. With python3-celery: a real worker runs the failing tasks (so the
 * FAILURE metas are Celery's own), then keeps consuming only the queues marked `consumed`,
 * slowly, during the console session. Without it: the same wire format, written directly.
 */
export async function seedCelery(
  url: string,
  plan: DemoPlan['zeus'],
  options: { logFile: string; python?: string; forceSimulated?: boolean },
): Promise<SeededCelery> {
  const python = options.python ?? SYSTEM_PYTHON;
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  try {
    if (options.forceSimulated || !celeryAvailable(python)) {
      await writeFailureMetas(redis, plan.queues, plan.worker.name);
      await pushBacklog(redis, plan.queues);
      return { mode: 'simulated', workers: [], stop: async () => {} };
    }
    const log = createWriteStream(options.logFile, { flags: 'a' });
    const env = {
      ...process.env,
      ZEUS_DEMO_BROKER: url,
      ZEUS_DEMO_JOB_SECONDS: String(plan.worker.jobMs / 1000),
      PYTHONDONTWRITEBYTECODE: '1',
    };
    const queues = plan.queues.map((q) => q.name);
    // Not detached: a Ctrl-C in the terminal reaches the worker too, even mid-seeding.
    const worker = spawn(
      python,
      [
        '-m',
        'celery',
        '-A',
        'zeus_demo',
        'worker',
        '-Q',
        queues.join(','),
        '-n',
        plan.worker.name,
        '-c',
        String(plan.worker.concurrency),
        '--without-gossip',
        '--without-mingle',
        '-l',
        'INFO',
      ],
      { cwd: APP_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    worker.stdout?.pipe(log);
    worker.stderr?.pipe(log);
    const stop = async () => {
      if (worker.exitCode !== null || worker.pid === undefined) return;
      // warm shutdown of the main process: running tasks finish and prefetched messages go back
      // to their lists (a signal to the whole group would kill the pool children mid-task)
      worker.kill('SIGTERM');
      if (!(await waitForExit(worker, 10_000))) {
        worker.kill('SIGKILL');
        await waitForExit(worker, 2000);
      }
      log.end();
    };
    try {
      const failures = plan.queues.flatMap((q) =>
        q.failures.map((f) => ({ queue: q.name, task: f.task, count: f.count })),
      );
      const seedPlan = {
        worker: plan.worker.name,
        failures,
        queues,
        keep: plan.queues.filter((q) => q.consumed).map((q) => q.name),
      };
      const producer = await runToEnd(python, ['zeus_demo.py', 'seed', JSON.stringify(seedPlan)], {
        cwd: APP_DIR,
        env,
        timeoutMs: 90_000,
      });
      const lastLine = producer.stdout.trim().split('\n').pop() ?? '';
      let outcome: { ok?: boolean; error?: string } = {};
      try {
        outcome = JSON.parse(lastLine);
      } catch {}
      if (!outcome.ok) {
        throw new Error(
          `the Celery producer failed: ${outcome.error ?? producer.stderr.trim().split('\n').pop() ?? 'no output'}`,
        );
      }
      await pushBacklog(redis, plan.queues);
    } catch (error) {
      await stop();
      throw error;
    }
    return { mode: 'real', workers: [plan.worker.name], stop };
  } finally {
    redis.disconnect();
  }
}
