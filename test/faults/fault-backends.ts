import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { bullmqSystem, celerySystem } from '../helpers/config-file.js';
import type { PurgeFaultBackend } from './fault-fixture.js';

/** A kombu envelope as Celery's `apply_async` LPUSHes it, with its own task id (n in its last digits). */
function celeryEnvelope(n: number): string {
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return JSON.stringify({
    body: Buffer.from(
      JSON.stringify([[n, 1], {}, { callbacks: null, errbacks: null, chain: null }]),
    ).toString('base64'),
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    headers: {
      lang: 'py',
      task: 'tasks.add',
      id,
      root_id: id,
      parent_id: null,
      retries: 0,
      argsrepr: `(${n}, 1)`,
    },
    properties: {
      correlation_id: id,
      delivery_mode: 2,
      delivery_info: { exchange: '', routing_key: 'celery' },
      priority: 0,
      body_encoding: 'base64',
      delivery_tag: id,
    },
  });
}

/** The task id of a kombu envelope. */
const taskIdOf = (message: string) => (JSON.parse(message) as { headers: { id: string } }).headers.id;

/** A BullMQ queue `hs/events` (prefix `hs`) of raw jobs, as the purge and undo fault tests drive it. */
export const BULLMQ_FAULT_BACKEND: PurgeFaultBackend = {
  kind: 'BullMQ',
  noun: 'jobs',
  restores: 'every job once',
  system: 'hs',
  queue: 'events',
  systemConfig: (url) => bullmqSystem('hs', url, 'hs'),
  seed: (client, count) => seedRawBullmqJobs(client, { prefix: 'hs', queue: 'events', count, batch: 10_000 }),
  // A BullMQ job is its id in the wait list, and its id in the archive.
  list: 'hs:events:wait',
  queuedId: (entry) => entry,
  archivedId: (line) => line.id!,
  chunksBeforePause: 2,
  // A worker moves the job to active, under a lock; its hash stays.
  async takeByWorker(client, entry) {
    await client.multi().lrem('hs:events:wait', 1, entry).lpush('hs:events:active', entry).exec();
  },
  // Run and removed on completion (removeOnComplete): no hash, no list.
  async ranAndGone(client, entries) {
    for (let i = 0; i < entries.length; i += 1_000) {
      const ids = entries.slice(i, i + 1_000);
      const pipeline = client.pipeline();
      for (const id of ids) pipeline.lrem('hs:events:wait', -1, id);
      pipeline.unlink(...ids.map((id) => `hs:events:${id}`));
      await pipeline.exec();
    }
  },
};

/** A Celery queue `zeus/celery` of kombu envelopes, as the purge and undo fault tests drive it. */
export const CELERY_FAULT_BACKEND: PurgeFaultBackend = {
  kind: 'Celery',
  noun: 'messages',
  restores: 'every message once, in order',
  system: 'zeus',
  queue: 'celery',
  systemConfig: (url) => celerySystem('zeus', `${url}/0`, { queues: ['celery'], inspectTimeoutMs: 200 }),
  async seed(client, count) {
    await client.sadd('_kombu.binding.celery', 'celery\x06\x16\x06\x16celery');
    for (let from = 0; from < count; from += 5_000) {
      const batch = Array.from({ length: Math.min(5_000, count - from) }, (_, i) => celeryEnvelope(from + i));
      await client.lpush('celery', ...batch);
    }
  },
  // A Celery message is its task id, in the list and in the archived line's message.
  list: 'celery',
  queuedId: taskIdOf,
  archivedId: (line) => taskIdOf(line.m!),
  chunksBeforePause: 1,
  // kombu's QoS.append: the delivered message in `unacked` (as [message, exchange, routing key])
  // under its delivery tag, until the worker acknowledges it.
  async takeByWorker(client, entry) {
    const message = JSON.parse(entry) as { properties: { delivery_tag: string } };
    await client
      .multi()
      .lrem('celery', 1, entry)
      .hset('unacked', message.properties.delivery_tag, JSON.stringify([message, '', 'celery']))
      .zadd('unacked_index', Date.now() / 1000, message.properties.delivery_tag)
      .exec();
  },
  async ranAndGone(client, entries) {
    for (let i = 0; i < entries.length; i += 1_000) {
      const pipeline = client.pipeline();
      for (const entry of entries.slice(i, i + 1_000)) pipeline.lrem('celery', -1, entry);
      await pipeline.exec();
    }
  },
};
