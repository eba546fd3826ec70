import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend, createQueueOps, type QueueOps } from '../../src/app.js';
import { renderText } from '../../src/blocks/render-text.js';
import { configSchema } from '../../src/config/schema.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Reply } from '../../src/pipeline/types.js';
import { EVERY_VERB } from '../commands/fixture.js';
import { tempDir } from '../helpers/cli-run.js';
import { ABILITY_CHECKS, type BackendFixture, describeQueueBackend, type SeedQueue } from './contract.js';
import { createStubBackend, createStubSystem, type StubSystem } from './stub/index.js';

// A third queue system is one folder (./stub), one fixture (below) and the suite: the suite runs
// on it, every optional check skipped because it declares no optional ability, and the app's
// commands answer it through the contract alone.

function seedInto(system: StubSystem, queues: SeedQueue[]) {
  for (const queue of queues) {
    for (const failure of queue.failures) system.fail(queue.name, failure.taskName, failure.error);
    for (let i = 0; i < queue.waiting; i++) system.add(queue.name, 'deliver');
  }
}

async function makeStubFixture(): Promise<BackendFixture> {
  const system = createStubSystem();
  return {
    backend: createStubBackend('stubby', system),
    async seed(queues) {
      seedInto(system, queues);
    },
    unreachableBackend: () => createStubBackend('stubby', system, { down: true }),
    async cleanup() {},
  };
}

describeQueueBackend('a stub system with no optional ability', makeStubFixture);

it('the stub declares none of the abilities the suite checks, and brings no workers to check them on', async () => {
  const fixture = await makeStubFixture();
  expect(Object.keys(ABILITY_CHECKS).filter((ability) => ability in fixture.backend)).toEqual([]);
  expect(fixture.withWorkers).toBeUndefined();
});

describe("the app's commands on a system that declares no optional ability", () => {
  const tmp = tempDir('stub');
  const system = createStubSystem();
  let ops: QueueOps;

  beforeAll(async () => {
    seedInto(system, [
      { name: 'alpha', waiting: 3, failures: [] },
      { name: 'beta', waiting: 0, failures: [{ taskName: 'send', error: 'ConnectionError: timed out' }] },
    ]);
    const config = configSchema.parse({
      store: `sqlite:${join(tmp.dir, 'queue-ops.db')}`,
      roles: { admin: ['U0BOB'] },
      archive: { dir: join(tmp.dir, 'archive') },
      // The config names a system as config can today; the backend behind it is the stub's.
      systems: [
        { name: 'stubby', type: 'bullmq', redis: 'redis://127.0.0.1:1', queues: ['alpha', 'beta'] },
        // Real systems beside it (never reached: what they cannot do is refused before any read).
        { name: 'hs', type: 'bullmq', redis: 'redis://127.0.0.1:1', queues: ['events'] },
        { name: 'zeus', type: 'celery', redis: 'redis://127.0.0.1:1/0', queues: ['celery'] },
      ],
    });
    ops = await createQueueOps({
      config,
      env: {},
      logger: createLogger({ level: 'silent' }),
      backendFor: (s) => (s.name === 'stubby' ? createStubBackend(s.name, system) : createBackend(s)),
    });
  });

  afterAll(async () => {
    await ops?.close();
    tmp.remove();
  });

  const run = (...words: string[]): Promise<Reply> =>
    ops.dispatcher.handle({ actor: { id: 'U0BOB' }, via: 'cli', words, locale: 'en' });
  const text = (reply: Reply) => renderText(reply.message).text;

  it('reads through the required methods: status, dlq and workers answer', async () => {
    const status = await run('status', 'stubby');
    expect(status.ok, text(status)).toBe(true);
    expect(text(status)).toContain('alpha');
    const dlq = await run('dlq', 'stubby/beta');
    expect(dlq.ok, text(dlq)).toBe(true);
    expect(text(dlq)).toContain('ConnectionError: timed out');
    const workers = await run('workers', 'stubby');
    expect(workers.ok, text(workers)).toBe(true);
  });

  /** Each verb that needs an optional ability, as a user types it against the stub system. */
  const NEEDS_AN_ABILITY: Record<string, string[]> = {
    redis: ['redis', 'stubby'],
    results: ['results', 'stubby'],
    job: ['job', 'stubby/beta', '1'],
    pause: ['pause', 'stubby/alpha'],
    resume: ['resume', 'stubby/alpha'],
    retry: ['retry', 'stubby/beta', 'all'],
    purge: ['purge', 'stubby/alpha'],
    stuck: ['stuck', 'stubby'],
    revoke: ['revoke', 'stubby', 'a1b2c3'],
    fail: ['fail', 'stubby/alpha', '1'],
    'expire-results': ['expire-results', 'stubby'],
    'rate-limit': ['rate-limit', 'stubby/alpha', '10/1s'],
    concurrency: ['concurrency', 'stubby/alpha', '3'],
  };

  it('names only verbs the app has', () => {
    for (const verb of Object.keys(NEEDS_AN_ABILITY)) expect(EVERY_VERB).toContain(verb);
  });

  it.each(Object.entries(NEEDS_AN_ABILITY))(
    '%s answers in one line that this system cannot, and asks for no approval',
    async (_verb, words) => {
      const reply = await run(...words);
      const shown = text(reply);
      expect(reply.ok, shown).toBe(false);
      expect(reply.error?.code, shown).toBe('NotSupported');
      expect(shown.trim().split('\n'), shown).toHaveLength(1);
      expect(shown).toMatch(/^⚠ `stubby` \(stub\) cannot .+\.$/);
      expect(shown).not.toMatch(/\bat .*\.(ts|js):\d+|TypeError|undefined/);
      expect(await ops.approvals.pending()).toEqual([]);
    },
  );

  it('revoke and fail name the ability, not the other system: nothing points the stub to a verb it cannot run either', async () => {
    expect(text(await run('revoke', 'stubby', 'a1b2c3'))).toBe('⚠ `stubby` (stub) cannot revoke.');
    expect(text(await run('fail', 'stubby/alpha', '1'))).toBe('⚠ `stubby` (stub) cannot fail.');
  });

  it('a system that has the other one is pointed to it, in a sentence', async () => {
    expect(text(await run('revoke', 'hs', 'a1b2c3'))).toBe(
      '⚠ `hs` (bullmq) cannot revoke a task; `/queue fail <system>/<queue> <job-id>` moves an active job to failed.',
    );
    expect(text(await run('fail', 'zeus/celery', '1'))).toBe(
      '⚠ `zeus` (celery) cannot fail a job; `/queue revoke <system> <task-id>` stops a task.',
    );
  });
});
