import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { connectionFor, deletePrefix, randomName, systemFor } from '../helpers/bullmq-jobs.js';
import { parsePrometheusText } from '../helpers/prom-text.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * `metrics.cacheSeconds`: one read of a system serves every scrape for that long, so a Prometheus
 * scraping every few seconds (or several of them) costs the watched Redis one read per window.
 */
const url = testRedisUrl();
const prefix = randomName('mcache');

afterAll(async () => {
  await deletePrefix(url, prefix);
});

describe('the metrics cache', () => {
  it('serves scrapes from one read for cacheSeconds, then reads again', async () => {
    const queue = new Queue('dispatch-ios', { connection: connectionFor(url), prefix });
    await queue.add('push', {});
    const system = systemFor(url, prefix, ['dispatch-ios']);
    const backend = createBullmqBackend(system);
    let clock = 1_000_000;
    const metrics = createMetrics({
      backends: { names: () => [system.name], get: () => backend },
      cacheSeconds: 10,
      now: () => clock,
      processMetrics: false,
    });
    const waiting = async () =>
      parsePrometheusText(await metrics.render())
        .get('queue_ops_queue_jobs')
        ?.samples.find((s) => s.labels.state === 'waiting')?.value;
    try {
      // The first read connects and loads the scripts into this Redis (one more round trip when
      // another test has not loaded them already): the counts below are of the reads alone.
      expect(await waiting()).toBe(1);
      clock += 10_000;
      const start = backend.stats().roundTrips;
      await queue.add('push', {});
      expect(await waiting()).toBe(2);
      expect(backend.stats().roundTrips - start).toBe(1);
      await queue.add('push', {});
      clock += 9_999;
      // Within the window: the same numbers, no read.
      expect(await waiting()).toBe(2);
      expect(await waiting()).toBe(2);
      expect(backend.stats().roundTrips - start).toBe(1);
      clock += 1;
      expect(await waiting()).toBe(3);
      expect(backend.stats().roundTrips - start).toBe(2);
    } finally {
      await queue.close();
      await backend.close();
    }
  });
});
