/**
 * `npm run bench -- expire-results`: `/queue expire-results` on a result backend of 200,000
 * `celery-task-meta-*` keys without a TTL (`BENCH_RESULT_KEYS`) beside 100,000 other keys: the
 * preview's exact count and the run (SCAN, then one script per batch of ≤ 1,000 keys), each with
 * keys per second and the worst PING of a probe (a process of its own) meanwhile, beside the probe
 * on the idle Redis and the runbook's one `EVAL` over `KEYS` (which holds Redis for the whole loop).
 * Figures only.
 */
import { Redis } from 'ioredis';
import { countResultsWithoutTtl, expireResultsWithoutTtl } from '../src/backends/celery/expire-results.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { withProbe } from './purge.js';

const RESULTS = Number(process.env.BENCH_RESULT_KEYS ?? 200_000);
const OTHERS = 100_000;
const RESULT_VALUE = JSON.stringify({
  status: 'SUCCESS',
  result: 42,
  traceback: null,
  children: [],
  date_done: '2026-12-01T10:00:00.123456',
  task_id: 'x',
});

/** The runbook's loop, as written there (with the day it sets). */
const RUNBOOK_EVAL = `
local keys = redis.call('keys', 'celery-task-meta-*')
local deleted = 0
for _, key in ipairs(keys) do
  local ttl = redis.call('ttl', key)
  if ttl == -1 then
    redis.call('expire', key, 86400)
    deleted = deleted + 1
  end
end
return deleted`;

async function seed(admin: Redis): Promise<void> {
  for (let start = 0; start < RESULTS + OTHERS; start += 10_000) {
    const pipeline = admin.pipeline();
    for (let i = start; i < Math.min(RESULTS + OTHERS, start + 10_000); i++)
      if (i < RESULTS)
        pipeline.set(`celery-task-meta-${i.toString(16).padStart(8, '0')}-bench`, RESULT_VALUE);
      else pipeline.set(`other:${i}`, 'x');
    await pipeline.exec();
  }
}

export async function expireResultsBench(log: (text: string) => void): Promise<string[]> {
  const server = await startPrivateRedis();
  const url = `${server.url}/0`;
  const admin = new Redis(url);
  try {
    log(`expire-results: seeding ${RESULTS.toLocaleString('en-US')} result keys without a TTL…`);
    await seed(admin);
    const idle = await withProbe(url, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return 0;
    });
    let counted = 0;
    const preview = await withProbe(url, async () => {
      counted = (await countResultsWithoutTtl(admin, { maxMillis: 60_000 })).withoutTtl;
      return counted;
    });
    let expired = 0;
    let reports = 0;
    const runFigure = await withProbe(url, async () => {
      expired = (await expireResultsWithoutTtl(admin, 86_400, () => reports++)).expired;
      return expired;
    });
    // The runbook's one EVAL, on the same keys made TTL-less again.
    log('expire-results: the runbook EVAL over KEYS…');
    for (let cursor = '0'; ; ) {
      const [next, keys] = await admin.scan(cursor, 'MATCH', 'celery-task-meta-*', 'COUNT', 5000);
      if (keys.length) {
        const pipeline = admin.pipeline();
        for (const key of keys) pipeline.persist(key);
        await pipeline.exec();
      }
      cursor = next;
      if (cursor === '0') break;
    }
    let runbookExpired = 0;
    const runbook = await withProbe(url, async () => {
      runbookExpired = Number(await admin.eval(RUNBOOK_EVAL, 0));
      return runbookExpired;
    });
    const perSecond = (n: number, ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');
    const row = (label: string, f: typeof idle, note: string) =>
      `| ${label} | ${f.ms.toFixed(0)} ms | ${f.worstPing.toFixed(1)} ms | ${f.p99Ping.toFixed(1)} ms | ${f.longestCall.toFixed(1)} ms | ${note} |`;
    return [
      '',
      `expire-results on ${RESULTS.toLocaleString('en-US')} result keys without a TTL (+ ${OTHERS.toLocaleString('en-US')} other keys)`,
      '| run | time | worst PING | p99 PING | longest call | note |',
      '|---|---|---|---|---|---|',
      row('idle Redis, 1 s', idle, 'the probe alone'),
      row(
        'preview (exact count)',
        preview,
        `${counted.toLocaleString('en-US')} counted, ${perSecond(counted, preview.ms)} keys/s`,
      ),
      row(
        'expire-results run',
        runFigure,
        `${expired.toLocaleString('en-US')} given a TTL, ${perSecond(expired, runFigure.ms)} keys/s, ${reports} progress reports`,
      ),
      row('runbook `EVAL` over `KEYS`', runbook, `${runbookExpired.toLocaleString('en-US')} in one call`),
    ];
  } finally {
    admin.disconnect();
    await server.stop();
  }
}
