import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId, baseActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import { messages } from '../../src/i18n/index.js';
import { connectionFor } from './../helpers/bullmq-jobs.js';
import { jsonOf, requestOf } from '../helpers/cli-run.js';
import {
  burstOfOneName,
  pausedQueue,
  retryLoop,
  type Scenario,
  slowEndpoint,
  slowEndpointCelery,
} from '../helpers/why-scenarios.js';

/**
 * A fix button of `why` carries a key, never a command: its click reads the evidence again and
 * runs the fix of that key exactly as typing it would, under the same guards and policy.
 */
let scenario: Scenario;
let queue: Queue;

interface Button {
  type: string;
  action_id: string;
  value: string;
  text: { text: string };
}

function buttonsOf(message: { blocks: unknown[] }): Button[] {
  return (message.blocks as { type: string; elements?: Button[] }[])
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? []);
}

beforeAll(async () => {
  scenario = await pausedQueue();
  queue = new Queue('webhooks', { connection: connectionFor(scenario.redis.url), prefix: 'hs' });
}, 60_000);

afterAll(async () => {
  await queue?.close();
  await scenario?.close();
});

describe('why fix buttons', () => {
  it('offer resume of the paused queue, by key, with who paused it in the evidence', async () => {
    const { run, data } = await scenario.why();
    expect(data.causes[0]).toMatchObject({ id: 'paused', fixes: [{ command: 'resume pushizo/webhooks' }] });
    expect(data.causes[0]!.evidence.join('\n')).toMatch(/paused by U0ALICE at \d\d:\d\d UTC/);
    const message = jsonOf(run).message as { blocks: unknown[] };
    const [resume] = buttonsOf(message).filter((b) => baseActionId(b.action_id) === ActionId.WhyFix);
    expect(resume!.text.text).toBe('resume pushizo/webhooks');
    expect(resume!.value).toMatch(/^[0-9a-f]{12}\/pushizo\/webhooks$/);
    expect(resume!.value).not.toContain('resume');
  });

  it('the incident timeline counts a why as a look', async () => {
    await scenario.why();
    const timeline = jsonOf(await scenario.cli(['timeline'], 'U0BOB')).data as {
      events: { kind: string; verb?: string; target?: string; who: string }[];
    };
    expect(timeline.events).toContainEqual(
      expect.objectContaining({ kind: 'look', verb: 'why', target: 'pushizo/webhooks', who: 'U0ALICE' }),
    );
  });

  it('a key the evidence no longer gives runs nothing', async () => {
    const run = await scenario.cli(['why', 'pushizo/webhooks', '--fix', '0123456789ab']);
    expect(run.code).not.toBe(0);
    expect(jsonOf(run).message.text).toContain(messages('en').why.fixGone.slice(0, 30));
    expect(await queue.isPaused()).toBe(true);
  });

  it('a viewer clicking it is refused by resume’s own guard', async () => {
    const { run } = await scenario.why();
    const [resume] = buttonsOf(jsonOf(run).message as { blocks: unknown[] });
    const words = wordsForAction(resume!.action_id, resume!.value)!;
    const refused = await scenario.cli(words, 'U0DAVE');
    expect(refused.code).not.toBe(0);
    expect(await queue.isPaused()).toBe(true);
  });

  it('an operator clicking it resumes the queue, audited as resume', async () => {
    const { run } = await scenario.why();
    const [resume] = buttonsOf(jsonOf(run).message as { blocks: unknown[] });
    const words = wordsForAction(resume!.action_id, resume!.value)!;
    expect(words).toEqual(['why', 'pushizo/webhooks', '--fix', resume!.value.slice(0, 12)]);
    const done = await scenario.cli(words, 'U0ALICE');
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(await queue.isPaused()).toBe(false);
    const audit = jsonOf(await scenario.cli(['audit', '20'], 'U0BOB')).data as {
      entries: { action: string }[];
    };
    expect(audit.entries.map((e) => e.action)).toEqual(
      expect.arrayContaining(['command.why', 'command.resume']),
    );
  });
});

describe('a Celery task timing out on a slow endpoint (a real worker)', () => {
  let celery: Scenario;
  beforeAll(async () => {
    celery = await slowEndpointCelery();
  }, 60_000);
  afterAll(async () => {
    await celery?.close();
  });

  it('offers rate-limit of the task the failures name, which parses and passes its checks when typed or clicked', async () => {
    const { run, data } = await celery.why();
    const slow = data.causes.find((c) => c.id === 'slow-dependency');
    expect(slow, JSON.stringify(data, null, 1)).toMatchObject({ confidence: 'strong', queues: ['celery'] });
    expect(slow!.fixes).toHaveLength(1);
    const command = slow!.fixes[0]!.command;
    expect(command).toMatch(/^rate-limit zeus tasks\.call_endpoint \d+\/m$/);
    // Typed: Celery's own checks (a rate it takes, a worker that has the task) pass, and the
    // policy's approval is asked for, naming the worker.
    const typed = await celery.cli(command.split(' '));
    expect(typed.code, typed.stdout + typed.stderr).toBe(0);
    const request = requestOf(typed);
    expect(request).toMatchObject({
      action: 'rate-limit',
      target: 'zeus/tasks.call_endpoint',
      status: 'pending',
    });
    expect(request.preview).toContain('w-slow@qo-test');
    // Clicked: the button's key finds the same fix again and runs the very same command, which
    // finds the typed one's request waiting.
    const button = buttonsOf(jsonOf(run).message as { blocks: unknown[] }).find(
      (b) => baseActionId(b.action_id) === ActionId.WhyFix && b.text.text === command,
    );
    const clicked = jsonOf(await celery.cli(wordsForAction(button!.action_id, button!.value)!));
    expect(clicked.error?.code, JSON.stringify(clicked)).toBe('DuplicateRequest');
    expect(clicked.message.text).toContain(request.id);
  });
});

describe('every limit fix of task-burst, retry-loop and slow-dependency passes its checks when typed', () => {
  for (const [name, build, cause] of [
    ['a Celery task in a retry loop', retryLoop, 'retry-loop'],
    ['a burst of one BullMQ job name', burstOfOneName, 'task-burst'],
    ['a BullMQ handler timing out', slowEndpoint, 'slow-dependency'],
  ] as const)
    it(name, async () => {
      const built = await build();
      try {
        const { data } = await built.why();
        const found = data.causes.find((c) => c.id === cause);
        const commands = found!.fixes.map((f) => f.command);
        expect(
          commands.some((c) => /^(rate-limit|concurrency) /.test(c)),
          JSON.stringify(found),
        ).toBe(true);
        for (const command of commands) {
          const typed = await built.cli(command.split(' '));
          expect(typed.code, `${command}: ${typed.stdout}${typed.stderr}`).toBe(0);
        }
      } finally {
        await built.close();
      }
    }, 60_000);
});
