import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { BullmqSystemConfig } from '../../src/config/schema.js';

export function randomName(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** ioredis options for BullMQ's own clients (Workers need maxRetriesPerRequest null). */
export function connectionFor(url: string) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port),
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    maxRetriesPerRequest: null,
  };
}

export function systemFor(url: string, prefix: string, queues?: string[]): BullmqSystemConfig {
  return { name: randomName('sys'), type: 'bullmq', redis: url, prefix, ...(queues ? { queues } : {}) };
}

/** Deletes every key under a test's own prefix, by SCAN (the shared test Redis is never flushed). */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Polls until `check` holds; fails the test with `what` after `timeoutMs` (10 s). */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Errors shaped like the Pushizo runbook's: a provider error with a stack under it, so the first
 * line is what groups them.
 */
export class ProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderError';
    this.stack = `${message}\n    at sendPush (/app/dispatch/apns.js:88:11)\n    at process.processTicksAndRejections`;
  }
}

/**
 * Records, through MONITOR, the commands one named client sends and the commands scripts run
 * inside Redis while recording.
 */
export async function monitorClient(url: string, clientName: string) {
  const admin = new Redis(url);
  const probe = new Redis(url);
  const list = String(await admin.client('LIST'));
  const line = list.split('\n').find((l) => l.includes(` name=${clientName} `));
  const addr = / addr=(\S+)/.exec(line ?? '')?.[1];
  if (!addr) throw new Error(`no client named ${clientName}`);
  const monitor = await admin.monitor();
  const seen: { source: string; args: string[] }[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    seen.push({ source, args });
  });
  // MONITOR starts asynchronously; a marker seen means everything after it is recorded.
  await settle();
  let from = seen.length;

  async function settle() {
    const marker = randomName('probe');
    await probe.echo(marker);
    await waitFor('MONITOR to catch up', async () =>
      seen.some((e) => e.args[0] === 'echo' && e.args[1] === marker),
    );
  }

  return {
    /** Starts a fresh recording. */
    async reset() {
      await settle();
      from = seen.length;
    },
    /** Commands the client sent, and commands scripts ran, since the last reset. */
    async recorded() {
      await settle();
      const window = seen
        .slice(from)
        .filter((e) => !(e.args[0] === 'echo' && /^probe/.test(e.args[1] ?? '')));
      return {
        sent: window.filter((e) => e.source.endsWith(addr)).map((e) => e.args),
        inScripts: window.filter((e) => e.source.endsWith('lua')).map((e) => e.args),
      };
    },
    async stop() {
      monitor.disconnect();
      admin.disconnect();
      probe.disconnect();
    },
  };
}

/**
 * `count` failed jobs (ids 1..count) of the queue under `base` (`prefix:queue:`), written as
 * BullMQ 6 leaves a job whose last attempt failed: fast for a thousand, no worker needed.
 */
export async function seedFailedJobs(client: Redis, base: string, count: number): Promise<void> {
  const seed = client.pipeline();
  seed.hset(`${base}meta`, 'opts.maxLenEvents', '10000', 'version', 'bullmq:6.7.0');
  const at = Date.now() - 60_000;
  for (let n = 1; n <= count; n++) {
    seed.hset(`${base}${n}`, {
      name: 'deliver',
      data: JSON.stringify({ n }),
      opts: JSON.stringify({ attempts: 1 }),
      timestamp: String(at),
      delay: '0',
      priority: '0',
      processedOn: String(at + n),
      finishedOn: String(at + n + 5),
      attemptsMade: '1',
      atm: '1',
      ats: '1',
      failedReason: 'HTTP 503 from https://hooks.example/x',
      stacktrace: '[]',
    });
    seed.zadd(`${base}failed`, at + n + 5, String(n));
  }
  await seed.exec();
}
