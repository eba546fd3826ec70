import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { describePurgeUnderRedisFault } from './fault-fixture.js';

describePurgeUnderRedisFault({
  kind: 'BullMQ',
  noun: 'jobs',
  restores: 'every job once',
  system: 'hs',
  queue: 'events',
  systemConfig: (url) => [
    '  - name: hs',
    '    type: bullmq',
    `    redis: ${JSON.stringify(url)}`,
    '    prefix: hs',
  ],
  seed: (client, count) => seedRawBullmqJobs(client, { prefix: 'hs', queue: 'events', count, batch: 10_000 }),
  // A BullMQ job is its id in the wait list, and its id in the archive.
  list: 'hs:events:wait',
  queuedId: (entry) => entry,
  archivedId: (line) => line.id!,
  chunksBeforePause: 2,
});
