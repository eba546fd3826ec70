import { Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import type { ActionProgress } from '../../src/approvals/service.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Request } from '../../src/pipeline/types.js';
import { connectionFor, waitFor } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene } from './fixture.js';

const redisUrl = testRedisUrl();

describe('a big retry approved in Slack reports its progress and its outcome', () => {
  let scene: BullmqScene;
  let ops: QueueOps | undefined;

  beforeEach(() => {
    scene = new BullmqScene(redisUrl);
  });

  afterEach(async () => {
    await ops?.close();
    await scene.cleanup();
  });

  it('the executor reports retrying n of total through the approvals progress listeners, then the result', async () => {
    const queue = scene.queue('webhooks');
    await queue.addBulk(Array.from({ length: 600 }, (_, n) => ({ name: 'deliver', data: { n } })));
    const failing = new Worker(
      'webhooks',
      async () => {
        throw new Error('HTTP 503 from https://hooks.example/x?sig=abc');
      },
      { connection: connectionFor(redisUrl), prefix: scene.prefix, concurrency: 100 },
    );
    await waitFor('600 failures', async () => (await queue.getJobCounts('failed')).failed === 600);
    await failing.close();

    const config = parseConfig(
      `slack: { allowedChannels: [C0INCIDENT] }
store: sqlite:${scene.dir}/store.db
roles: { viewer: ["*"], operator: [U0ALICE, U0CAROL] }
policies:
  retry: { role: operator, approvals: 1 }
systems:
  - { name: pushizo, type: bullmq, redis: "\${REDIS_URL}", prefix: ${scene.prefix} }
`,
      { REDIS_URL: redisUrl },
    );
    ops = await createQueueOps({ config, env: {}, logger: createLogger({ level: 'silent' }) });
    const seen: ActionProgress[] = [];
    ops.approvals.onProgress((request, progress) => {
      if (request.action === 'retry') seen.push(progress);
    });
    const slack = (actor: string, words: string[]): Request => ({
      actor: { id: actor },
      via: 'slack',
      channel: 'C0INCIDENT',
      words,
      locale: 'en',
    });
    const asked = await ops.dispatcher.handle(slack('U0ALICE', ['retry', 'pushizo/webhooks', 'all']));
    expect(asked.ok).toBe(true);
    const request = (asked.data as { request: { id: string; preview: string } }).request;
    expect(request.preview).toBe(
      'retry pushizo/webhooks: 600 failed jobs, run again with their attempts reset. Errors: 600× HTTP 503 from https://hooks.example/<path> (e.g. HTTP 503 from https://hooks.example/x?sig=***). ' +
        'This is exactly what will run: these 600 jobs, those still failed when approved, and no others; failures that arrive after this preview are left for another request.',
    );
    const approved = await ops.dispatcher.handle(slack('U0CAROL', ['approve', request.id]));
    expect(approved.ok).toBe(true);
    expect(seen[0]).toEqual({ done: 0, total: 600, phase: 'retrying' });
    expect(seen.map((p) => p.done)).toEqual([0, 250, 500, 600]);
    expect(seen.every((p) => p.total === 600 && p.phase === 'retrying')).toBe(true);
    const result = (
      approved.data as { request: { result: { retried: number; ids: Record<string, string> } } }
    ).request.result;
    expect(result.retried).toBe(600);
    expect(Object.keys(result.ids)).toHaveLength(600);
    expect(approved.message.text).toContain('retry pushizo/webhooks');
    expect(JSON.stringify(approved.message.blocks)).toContain(
      '600 jobs of pushizo/webhooks back in the queue',
    );
    expect(await queue.getJobCounts('failed', 'wait')).toMatchObject({ failed: 0, wait: 600 });
  }, 60_000);
});
