import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { dbFromUrl } from '../../src/backends/celery/keys.js';
import { createPidboxClient } from '../../src/backends/celery/pidbox.js';

/** Debian's interpreter, where python3-celery installs Celery 5 (not a pyenv or venv python). */
export const PYTHON = '/usr/bin/python3';
/** The Celery app (`qo_celery_app`) and producer (`produce.py`) used by the tests. */
export const CELERY_FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'celery');

let checked = false;

/** Fails with a message naming the missing package instead of a Python traceback. */
export function assertCeleryInstalled(): void {
  if (checked) return;
  const probe = spawnSync(PYTHON, ['-c', 'import celery, kombu, redis; print(celery.__version__)'], {
    encoding: 'utf8',
  });
  if (probe.status !== 0 || !/^5\./.test(probe.stdout.trim())) {
    throw new Error(
      `The Celery tests need Celery 5 for ${PYTHON} (Debian package python3-celery, which brings ` +
        `python3-kombu and python3-redis): apt-get install -y python3-celery. ` +
        `Probe said: ${(probe.stderr || probe.stdout || String(probe.error ?? '')).trim().split('\n').pop()}`,
    );
  }
  checked = true;
}

/** Where a Celery app lives: the broker, the result backend and kombu's global_keyprefix. */
export interface CeleryTarget {
  brokerUrl: string;
  /** Defaults to the broker. */
  resultUrl?: string;
  globalKeyprefix?: string;
}

export interface CeleryWorkerOptions extends CeleryTarget {
  queues: string[];
  /** Node name; `@qo-test` is added when it has no `@`. */
  name: string;
  concurrency?: number;
  pool?: 'prefork' | 'solo' | 'threads';
  /** `--autoscale=max,min`: the worker's pool then grows and shrinks between the two itself. */
  autoscale?: { max: number; min: number };
  startTimeoutMs?: number;
  /** false: the app stores results without `result_extended` (no task name, arguments or queue). */
  resultExtended?: boolean;
  /** true: the app sets `worker_pool_restarts`, so the worker obeys `pool_restart`. */
  poolRestarts?: boolean;
  /** null: the app sets `result_expires=None`, so its results are stored without a TTL. */
  resultExpires?: null;
}

export interface CeleryWorker {
  /** The full node name, as it appears in pidbox replies. */
  name: string;
  /** What the worker printed so far (for failure messages). */
  output(): string;
  /** The worker's main process. */
  pid: number;
  /** Settles when the worker's main process has exited (a `shutdown`, a crash, `stop()`). */
  exited: Promise<void>;
  stop(): Promise<void>;
}

function celeryEnv(target: CeleryTarget): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PYTHONPATH: CELERY_FIXTURE_DIR,
    PYTHONDONTWRITEBYTECODE: '1',
    QO_BROKER_URL: target.brokerUrl,
    QO_RESULT_URL: target.resultUrl ?? target.brokerUrl,
    QO_GLOBAL_KEYPREFIX: target.globalKeyprefix ?? '',
  };
}

/**
 * Starts a real `celery worker` on the fixture app and resolves once it answers a pidbox ping
 * addressed to it; `stop()` asks for a warm shutdown (SIGTERM) and kills it after 5 s.
 */
export async function startCeleryWorker(options: CeleryWorkerOptions): Promise<CeleryWorker> {
  assertCeleryInstalled();
  const name = options.name.includes('@') ? options.name : `${options.name}@qo-test`;
  const args = [
    '-m',
    'celery',
    '-A',
    'qo_celery_app',
    'worker',
    '-Q',
    options.queues.join(','),
    '-n',
    name,
    '-c',
    String(options.concurrency ?? 1),
    '-P',
    options.pool ?? 'prefork',
    '-l',
    'info',
    // Mingle waits a second for peers at start; gossip adds traffic no test needs.
    '--without-mingle',
    '--without-gossip',
    ...(options.autoscale ? [`--autoscale=${options.autoscale.max},${options.autoscale.min}`] : []),
  ];
  const child: ChildProcess = spawn(PYTHON, args, {
    cwd: CELERY_FIXTURE_DIR,
    env: {
      ...celeryEnv(options),
      QO_RESULT_EXTENDED: options.resultExtended === false ? '0' : '1',
      QO_POOL_RESTARTS: options.poolRestarts ? '1' : '0',
      ...(options.resultExpires === null ? { QO_RESULT_EXPIRES: 'none' } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a kill also reaches the prefork children.
    detached: true,
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + String(chunk)).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  const stop = async () => {
    if (hasExited || child.pid === undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5000);
    await exited;
    clearTimeout(timer);
  };

  const redis = new Redis(options.brokerUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  const pidbox = createPidboxClient({
    client: redis,
    createBlockingClient: () => {
      const blocking = new Redis(options.brokerUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      blocking.on('error', () => {});
      return blocking;
    },
    layout: {
      globalKeyprefix: options.globalKeyprefix ?? '',
      prioritySteps: [0, 3, 6, 9],
      separator: '\x06\x16',
      fanoutPrefix: true,
      db: dbFromUrl(options.brokerUrl),
    },
  });
  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    for (;;) {
      if (hasExited) throw new Error(`celery worker ${name} exited during start:\n${output}`);
      const { replies } = await pidbox.broadcast('ping', {}, { timeoutMs: 300, destination: [name] });
      if (replies.some((r) => r.worker === name)) break;
      if (Date.now() > deadline) throw new Error(`celery worker ${name} did not answer a ping:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    await pidbox.close();
    redis.disconnect();
  }
  return { name, output: () => output, stop, pid: child.pid!, exited };
}

/** One task to publish with `apply_async`. */
export interface CeleryPublish {
  task: string;
  args?: unknown[];
  kwargs?: Record<string, unknown>;
  queue: string;
  priority?: number;
  /** Sets the ETA this many seconds from now (negative: in the past). */
  etaSeconds?: number;
  /** `apply_async(countdown=…)`: Celery turns it into an ETA this many seconds after sending. */
  countdown?: number;
  /** Wait until the task's result (or failure) is stored before publishing the next one. */
  wait?: boolean;
}

/**
 * Runs the fixture producer: publishes the tasks in order with Celery's own client and, for
 * `lengths`, returns what kombu itself says each queue holds.
 */
export async function publishCelery(
  target: CeleryTarget,
  tasks: CeleryPublish[],
  lengths: string[] = [],
): Promise<{ ids: string[]; lengths: Record<string, number> }> {
  assertCeleryInstalled();
  const spec = {
    publish: tasks.map((t) => ({
      task: t.task,
      args: t.args ?? [],
      kwargs: t.kwargs ?? {},
      queue: t.queue,
      priority: t.priority ?? 0,
      eta_seconds: t.etaSeconds ?? null,
      countdown: t.countdown ?? null,
      wait: t.wait ?? false,
    })),
    lengths,
  };
  return runFixtureScript('produce.py', target, spec);
}

/** Runs one of the fixture's Python scripts with `input` as JSON on stdin; its JSON answer. */
async function runFixtureScript<T>(script: string, target: CeleryTarget, input: unknown): Promise<T> {
  const child = spawn(PYTHON, [join(CELERY_FIXTURE_DIR, script)], {
    cwd: CELERY_FIXTURE_DIR,
    env: celeryEnv(target),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  child.stdin.end(JSON.stringify(input));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`celery ${script} failed (exit ${code}):\n${stderr.slice(-4000)}`);
  return JSON.parse(stdout) as T;
}

/** What `ask.py` asks Celery's own client (app.control, AsyncResult), and what it answers. */
interface CeleryQuestions {
  /** Sends a task and answers once a worker runs it. */
  start: { ask: { task: string; args?: unknown[]; queue: string }; answer: { id: string; worker: string } };
  /** `control.revoke(terminate=True)`, answered once each result reads REVOKED. */
  stop: { ask: string[]; answer: Record<string, never> };
  /** `AsyncResult(id).state` of each id. */
  states: { ask: string[]; answer: Record<string, string> };
  /** Each worker's rate limit for the task, from `inspect registered rate_limit` (null: none). */
  rate_limits: { ask: { task: string; workers: string[] }; answer: Record<string, string | null> };
}

/** Asks Celery's own client, for a check's oracle: never queue-ops' code. */
export function askCelery<K extends keyof CeleryQuestions>(
  target: CeleryTarget,
  kind: K,
  question: CeleryQuestions[K]['ask'],
): Promise<CeleryQuestions[K]['answer']> {
  assertCeleryInstalled();
  return runFixtureScript('ask.py', target, { [kind]: question });
}

/** `redis://127.0.0.1:6390` (+ any path) → the same server, DB `db`. */
export function redisDbUrl(baseUrl: string, db: number): string {
  const url = new URL(baseUrl);
  url.pathname = `/${db}`;
  return url.toString();
}
