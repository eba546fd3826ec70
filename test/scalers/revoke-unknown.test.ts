import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import type { Request } from '../../src/pipeline/types.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { celerySystem, configYaml } from '../helpers/config-file.js';

/**
 * `revoke` of a task id nothing knows would be broadcast to every worker without a word, so the
 * preview says where each id is known (a worker holds it, per `inspect query_task`; its
 * message waits in a queue's list; the result backend has it) and names the ids nothing knows; a
 * revoke naming only such ids is refused in one line and nothing is broadcast. A real Celery 5
 * worker on a Redis of its own (no other file's worker answers its broadcasts).
 */
const CONSUMED = 'revoke_work';
const IDLE = 'revoke_idle';

describe('revoke says which task ids no worker, queue or result knows', () => {
  let server: PrivateRedis;
  let worker: CeleryWorker;
  let ops: QueueOps;
  let dir: string;
  let finished: string;
  let scheduled: string;
  let waiting: string;
  let running: string;
  let reserved: string;
  const cli = (words: string[]): Request => ({ actor: { id: 'U0ALICE' }, via: 'cli', words, locale: 'en' });

  beforeAll(async () => {
    server = await startPrivateRedis();
    worker = await startCeleryWorker({
      brokerUrl: server.url,
      queues: [CONSUMED],
      name: 'zeus-revoke',
      concurrency: 1,
    });
    const publish = async (task: Parameters<typeof publishCelery>[1][number]) =>
      (await publishCelery({ brokerUrl: server.url }, [task])).ids[0]!;
    // A task that ran (its result is stored); one the worker holds until its eta; one waiting in
    // a queue no worker consumes; on the single process a long task that runs, and one reserved
    // (prefetched) behind it.
    finished = await publish({ task: 'tasks.add', args: [1, 2], queue: CONSUMED, wait: true });
    scheduled = await publish({ task: 'tasks.add', args: [3, 4], queue: CONSUMED, etaSeconds: 3600 });
    waiting = await publish({ task: 'tasks.add', args: [5, 6], queue: IDLE });
    running = await publish({ task: 'tasks.sleepy', args: [120], queue: CONSUMED });
    reserved = await publish({ task: 'tasks.add', args: [7, 8], queue: CONSUMED });
    dir = mkdtempSync(join(tmpdir(), 'qo-revoke-unknown-'));
    ops = await createQueueOps({
      config: parseConfig(
        configYaml({
          store: `sqlite:${join(dir, 'store.db')}`,
          roles: { viewer: ['*'], operator: ['U0ALICE'] },
          systems: [celerySystem('zeus', server.url, { queues: [CONSUMED, IDLE], inspectTimeoutMs: 1500 })],
        }),
        {},
      ),
      env: {},
      logger: silentLogger(),
    });
  }, 90_000);

  afterAll(async () => {
    await ops?.close();
    await worker?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('names where each known id is and which id nothing knows, in the preview', async () => {
    // The worker answers query_task for the task it reserved once it has fetched it.
    const zeus = ops.backends.get('zeus')!;
    await expect
      .poll(async () => (await zeus.locateTasks!([reserved]))[0]?.worker?.state, { timeout: 30_000 })
      .toBe('reserved');
    const reply = await ops.dispatcher.handle(
      cli(['revoke', 'zeus', finished, scheduled, waiting, running, reserved, 'typo-1']),
    );
    expect(reply.ok, reply.message.text).toBe(true);
    const request = (reply.data as { request: { id: string; preview: string } }).request;
    const parts = request.preview
      .replace(/^revoke on zeus: /, '')
      .replace(/; running ones finish.*$/, '')
      .split('; ');
    expect(parts).toEqual([
      `${finished} already finished (SUCCESS): nothing left to stop`,
      // An eta task sits with the worker, and in the unacked hash, until its time.
      `${scheduled} was delivered to a worker and is not yet acknowledged (it is skipped)`,
      `${waiting} waits in ${IDLE} (a worker skips it)`,
      expect.stringMatching(new RegExp(`^${running} \\(tasks\\.sleepy\\) runs on ${worker.name} for `)),
      `${reserved} is reserved on ${worker.name} (it is skipped when its turn comes)`,
      'typo-1 is known to no worker, queue or result (a typo?)',
    ]);
    expect((await ops.approvals.get(request.id))?.params.unknownIds).toEqual(['typo-1']);
  });

  it('refuses a revoke naming only ids nothing knows, in one line, and asks nothing of the workers', async () => {
    const before = (await ops.audit.recent(100)).length;
    const reply = await ops.dispatcher.handle(cli(['revoke', 'zeus', 'typo-2', 'typo-3']));
    expect(reply.ok).toBe(false);
    expect(reply.error?.code).toBe('UnknownTask');
    expect(reply.message.text).toBe(
      'No worker, queue or result of `zeus` knows task `typo-2`, `typo-3`; nothing was revoked. Valid: the id of a task that runs (`/queue stuck zeus`), waits in a queue or has a result.',
    );
    const trail = (await ops.audit.recent(100)).slice(0, (await ops.audit.recent(100)).length - before);
    expect(trail.some((e) => e.action === 'action.revoke' || e.action === 'request.created')).toBe(false);
  });
});
