import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ActionId } from '../../../src/blocks/action-ids.js';
import type { Message } from '../../../src/blocks/message.js';
import { validateMessage } from '../../../src/blocks/validate.js';
import { type PrivateRedis, startPrivateRedis } from '../../../src/lib/redis-server.js';
import { connectionFor, deletePrefix, waitFor } from '../../helpers/bullmq-jobs.js';
import { bullmqSystem } from '../../helpers/config-file.js';
import { freezeTimers } from '../../helpers/frozen-timers.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import {
  type AppHarness,
  buttonClick,
  captureResponses,
  randomId,
  slashCommand,
  startHarness,
} from './harness.js';

const asMessage = (body: Record<string, unknown>): Message => ({
  text: String(body.text ?? ''),
  blocks: (body.blocks ?? []) as Message['blocks'],
});
const allText = (body: Record<string, unknown>): string =>
  JSON.stringify({ text: body.text, blocks: body.blocks });

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => {
  nock.enableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

describe('Slack listeners over a real dispatcher and real BullMQ queues', () => {
  const url = testRedisUrl();
  const prefix = randomId('slk');
  let harness: AppHarness;
  let queues: Queue[] = [];

  beforeAll(async () => {
    const connection = connectionFor(url);
    const ios = new Queue('dispatch-ios', { connection, prefix });
    const webhooks = new Queue('webhooks', { connection, prefix });
    queues = [ios, webhooks];
    await ios.addBulk(Array.from({ length: 7 }, (_, i) => ({ name: 'push', data: { i } })));
    await webhooks.add('hook', { ok: true }, { attempts: 1 });
    await webhooks.add('hook', { ok: true }, { attempts: 1 });
    // A job error written by someone hostile or careless: it must never ping the channel.
    const worker = new Worker(
      'webhooks',
      async () => {
        throw new Error('upstream said <!channel> and <https://evil.example|click here> & gave up');
      },
      { connection, prefix },
    );
    await waitFor('two failed webhooks', async () => (await webhooks.getFailedCount()) === 2);
    await worker.close();

    harness = await startHarness({
      systems: [bullmqSystem('pushizo', url, prefix, { queues: ['dispatch-ios', 'webhooks'] })],
    });
  });

  afterAll(async () => {
    await harness?.close();
    for (const q of queues) await q.close();
    await deletePrefix(url, prefix);
  });

  it('answers /queue status in the channel with valid blocks that show each queue', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/status`;
    const { bodies, scope } = captureResponses(path);
    const { acks } = await harness.send(slashCommand('status', path));

    expect(acks).toBe(1);
    expect(scope.isDone()).toBe(true);
    expect(bodies).toHaveLength(1);
    const body = bodies[0] as Record<string, unknown>;
    expect(body.response_type).toBe('in_channel');
    expect(validateMessage(asMessage(body))).toEqual([]);
    const text = allText(body);
    expect(text).toContain('dispatch-ios');
    expect(text).toContain('webhooks');
    expect(text).toContain(ActionId.StatusRefresh);
  });

  it('replaces the original message in place when the refresh button is clicked', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/refresh`;
    const { bodies } = captureResponses(path);
    const { acks } = await harness.send(buttonClick(ActionId.StatusRefresh, 'pushizo', path));

    expect(acks).toBe(1);
    expect(bodies).toHaveLength(1);
    const body = bodies[0] as Record<string, unknown>;
    expect(body.replace_original).toBe(true);
    expect(validateMessage(asMessage(body))).toEqual([]);
    expect(allText(body)).toContain('dispatch-ios');
  });

  it('opens a DLQ sample in place from its button, with a job error escaped so it cannot ping the channel', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/dlq`;
    const { bodies } = captureResponses(path);
    await harness.send(buttonClick(ActionId.OpenDlq, 'pushizo/webhooks', path));

    const body = bodies[0] as Record<string, unknown>;
    expect(body.replace_original).toBe(true);
    const text = allText(body);
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<https://evil.example');
    expect(validateMessage(asMessage(body))).toEqual([]);
  });

  it('escapes a job error containing <!channel> in a typed /queue dlq answer', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/dlq`;
    const { bodies } = captureResponses(path);
    await harness.send(slashCommand('dlq pushizo/webhooks', path));

    const text = allText(bodies[0] as Record<string, unknown>);
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).not.toContain('<!channel>');
  });

  it('answers an unknown queue with one ephemeral line naming the valid queues', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/unknown-queue`;
    const { bodies } = captureResponses(path);
    await harness.send(slashCommand('dlq pushizo/webhoks', path));

    const body = bodies[0] as Record<string, unknown>;
    expect(body.response_type).toBe('ephemeral');
    expect(String(body.text)).toContain('webhooks');
    expect(validateMessage(asMessage(body))).toEqual([]);
  });

  it('answers a forged action id in our namespace with one ephemeral line and runs nothing', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/forged`;
    const { bodies } = captureResponses(path);
    const before = harness.logLines.filter((l) => l.msg === 'command answered').length;
    const { acks } = await harness.send(buttonClick('queue_ops.queue.purge', 'pushizo/webhooks', path));

    expect(acks).toBe(1);
    expect(bodies).toHaveLength(1);
    const body = bodies[0] as Record<string, unknown>;
    expect(body).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(body.blocks as unknown[]).toHaveLength(1);
    expect(String(body.text)).toContain('not one queue-ops knows');
    // The dispatcher logs every command it answers; a forged click never reaches it.
    expect(harness.logLines.filter((l) => l.msg === 'command answered').length).toBe(before);
  });

  it('treats a button value that cannot be one of our ids as forged', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/forged-value`;
    const { bodies } = captureResponses(path);
    await harness.send(buttonClick(ActionId.OpenDlq, 'pushizo/webhooks purge now', path));

    expect(bodies[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String((bodies[0] as Record<string, unknown>).text)).toContain('not one queue-ops knows');
  });

  it('acks and answers a button from outside the queue_ops namespace instead of timing out', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/foreign`;
    const { bodies } = captureResponses(path);
    const { acks } = await harness.send(buttonClick('someone_else.button', 'x', path));

    expect(acks).toBe(1);
    expect(bodies[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
  });

  it('reads only the action id and value from a click: edited message blocks change nothing', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/edited`;
    const { bodies } = captureResponses(path);
    const click = buttonClick(ActionId.OpenDlq, 'pushizo/dispatch-ios', path, {
      message: {
        ts: '1700000000.000100',
        blocks: [
          {
            type: 'actions',
            elements: [{ type: 'button', action_id: 'queue_ops.dlq.open', value: 'pushizo/webhooks' }],
          },
        ],
      },
      state: { values: { b1: { a: { type: 'plain_text_input', value: 'dlq pushizo/webhooks' } } } },
    });
    await harness.send(click);

    const text = allText(bodies[0] as Record<string, unknown>);
    expect(text).toContain('dispatch-ios');
    expect(text).not.toContain('&lt;!channel&gt;');
  });

  it('answers an error from a button ephemerally without overwriting the shared message', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/error`;
    const { bodies } = captureResponses(path);
    await harness.send(buttonClick(ActionId.DlqRefresh, 'pushizo/nope', path));

    expect(bodies[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
  });

  it('ignores a Slack retry of a request it already received', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/retry`;
    const { bodies, scope } = captureResponses(path);
    const { acks } = await harness.send(slashCommand('status', path), {
      retryNum: 1,
      retryReason: 'http_timeout',
    });

    expect(acks).toBe(1);
    expect(bodies).toHaveLength(0);
    expect(scope.isDone()).toBe(false);
  });

  it('logs an expired response_url instead of crashing', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/expired`;
    const { scope } = captureResponses(path, 404);
    await expect(harness.send(slashCommand('help', path))).resolves.toEqual({ acks: 1 });

    expect(scope.isDone()).toBe(true);
    const line = harness.logLines.find((l) => l.msg === 'respond() failed; answer not delivered');
    expect(line).toMatchObject({ statusCode: 404 });
  });
});

describe('one Slack pipeline: the dispatcher’s middleware chain is the seam for the guards', () => {
  const url = testRedisUrl();

  it('stops the command when a middleware of the chain answers instead of calling next, and the answer reaches Slack', async () => {
    const seen: string[] = [];
    const harness = await startHarness(
      { systems: [bullmqSystem('pushizo', url, randomId('mw'))] },
      {
        middleware: [
          async (request, next, { command }) => {
            // The verb arrives resolved (a typo's did-you-mean happens before the chain).
            seen.push(command.verb);
            if (request.actor.id !== 'U0MALLORY') return next();
            return {
              ok: false,
              visibility: 'ephemeral',
              message: { text: 'You need the `operator` role.', blocks: [] },
              error: { code: 'Forbidden' },
            };
          },
        ],
      },
    );
    try {
      const denied = `/commands/T0TEAM/${randomId('')}/denied`;
      const allowed = `/commands/T0TEAM/${randomId('')}/allowed`;
      const d = captureResponses(denied);
      const a = captureResponses(allowed);
      expect(await harness.send(slashCommand('help', denied, { user_id: 'U0MALLORY' }))).toEqual({ acks: 1 });
      await harness.send(slashCommand('help', allowed));

      expect(d.bodies).toEqual([
        { response_type: 'ephemeral', text: 'You need the `operator` role.', blocks: [] },
      ]);
      expect(a.bodies).toHaveLength(1);
      expect(allText(a.bodies[0] as Record<string, unknown>)).toContain('status');
      expect(seen).toEqual(['help', 'help']);
      // Each request is answered once, by the one dispatcher.
      expect(harness.logLines.filter((l) => l.msg === 'command answered')).toHaveLength(2);
    } finally {
      await harness.close();
    }
  });
});

describe('a Redis that hangs', () => {
  let hung: PrivateRedis;
  let harness: AppHarness;

  beforeAll(async () => {
    hung = await startPrivateRedis();
    harness = await startHarness({
      systems: [bullmqSystem('stalled', hung.url, 'hs', { queues: ['events'] })],
    });
    process.kill(hung.pid as number, 'SIGSTOP');
  });

  afterAll(async () => {
    process.kill(hung.pid as number, 'SIGCONT');
    await harness.close();
    await hung.stop();
  });

  it('is acknowledged before the Redis work finishes, and the error follows through respond within 5 s', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/hung`;
    const { bodies, scope } = captureResponses(path);
    // The 5 s are counted on stopped timers, not on this machine's clock: the bot's wait on the
    // stopped Redis can only end on a timer, and 5 s of them, moved on at once once ack() has
    // happened, must end it, with no timer after them (one that needs a later timer never
    // settles, and the test times out).
    freezeTimers();
    try {
      const run = harness.deliver(slashCommand('dlq stalled/events', path));

      await run.acked;
      // Redis is stopped, so nothing can have been answered yet when ack() has already happened.
      expect(scope.isDone()).toBe(false);
      expect(bodies).toHaveLength(0);

      await vi.advanceTimersByTimeAsync(5_000);
      await run.done;
    } finally {
      vi.useRealTimers();
    }
    expect(bodies).toHaveLength(1);
    const body = bodies[0] as Record<string, unknown>;
    expect(body.response_type).toBe('ephemeral');
    expect(String(body.text)).toContain('stalled');
    expect(String(body.text)).toMatch(/not answering|timed out/);
  });
});
