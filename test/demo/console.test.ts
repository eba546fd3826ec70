import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { ActionId } from '../../src/blocks/action-ids.js';
import { parseConfig } from '../../src/config/load.js';
import { writeDemoConfig } from '../../src/demo/config.js';
import { withDb } from '../../src/demo/redis.js';
import { type SeededDemo, seedDemo } from '../../src/demo/seed.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Request } from '../../src/pipeline/types.js';
import { createConsoleSession, runLines } from '../../src/transports/console/console.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/** `data.request` of an answer, failing the test when there is none. */
function requestOf(outcome: { reply?: { data?: unknown } }): { id: string; status: string } {
  const data = outcome.reply?.data as { request?: { id: string; status: string } } | undefined;
  if (!data?.request) throw new Error(`no data.request in ${JSON.stringify(outcome.reply?.data)}`);
  return data.request;
}

/** The database of the shared test Redis that only this file uses. */
const CONSOLE_DB = 13;

describe('the demo console', () => {
  let dir: string;
  let seeded: SeededDemo;
  let app: QueueOps;
  const seen: Request[] = [];

  beforeAll(async () => {
    const url = withDb(testRedisUrl(), CONSOLE_DB);
    const admin = new Redis(url);
    await admin.flushdb();
    admin.disconnect();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-console-test-'));
    seeded = await seedDemo({ redisUrl: url, scale: 'small', workDir: dir, simulateCelery: true });
    const path = writeDemoConfig(dir, url, seeded.plan);
    app = await createQueueOps({
      config: parseConfig(readFileSync(path, 'utf8'), {}),
      env: {},
      logger: silentLogger(),
    });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await seeded?.stop();
    const admin = new Redis(withDb(testRedisUrl(), CONSOLE_DB));
    await admin.flushdb();
    admin.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  const session = (user = 'U0ALICE') =>
    createConsoleSession({
      user,
      dispatcher: {
        handle: (request) => {
          seen.push(request);
          return app.dispatcher.handle(request);
        },
      },
    });

  it('accepts a command with or without /queue and shows the rendered message with numbered buttons', async () => {
    const console = session();
    const typed = await console.handleLine('/queue status pushizo');
    const bare = await console.handleLine('status pushizo');
    expect(typed.reply?.ok).toBe(true);
    expect(typed.output).toContain('dispatch-ios');
    expect(bare.output.split('\n')[0]).toBe(typed.output.split('\n')[0]);
    const open = console.buttons.find(
      (b) => b.actionId === ActionId.OpenDlq && b.value === 'pushizo/dispatch-ios',
    );
    expect(open).toBeDefined();
    expect(typed.output).toContain(`[${open!.index}] ${open!.label}`);
  });

  it('presses a button by its number: the DLQ opens, as the current user, with the button as the action', async () => {
    const console = session();
    await console.handleLine('status');
    const open = console.buttons.find(
      (b) => b.actionId === ActionId.OpenDlq && b.value === 'pushizo/dispatch-ios',
    )!;
    await console.handleLine(':user U0BOB');
    const pressed = await console.handleLine(String(open.index));
    expect(pressed.reply?.ok).toBe(true);
    expect(pressed.output).toContain('pushizo/dispatch-ios');
    expect(pressed.output).toContain('APNs 429 TooManyRequests');
    const request = seen.at(-1)!;
    expect(request.words).toEqual(['dlq', 'pushizo/dispatch-ios']);
    expect(request.action).toEqual({ actionId: ActionId.OpenDlq, value: 'pushizo/dispatch-ios' });
    expect(request.actor.id).toBe('U0BOB');
    expect(request.via).toBe('console');
    // the DLQ's own buttons are now the ones a number presses
    expect(console.buttons.every((b) => b.actionId !== ActionId.OpenDlq)).toBe(true);
  });

  it('answers bad input in one line, never with a stack trace, and keeps the last buttons', async () => {
    const console = session();
    await console.handleLine('status');
    const before = console.buttons.length;
    for (const line of [
      'dlq nope/x',
      'dlq pushizo/nope',
      'frobnicate',
      'dlq "unclosed',
      '999',
      ':user bob',
    ]) {
      const outcome = await console.handleLine(line);
      expect(outcome.output.trim().split('\n'), line).toHaveLength(1);
      expect(outcome.output, line).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
      expect(outcome.quit).toBe(false);
    }
    expect(console.buttons.length).toBe(before);
    expect(console.user).toBe('U0ALICE');
  });

  it('words a bad --since as two sentences, and shows a long timeline whole instead of pointing at Slack direct messages', async () => {
    const console = session('U0BOB');
    const bad = await console.handleLine('timeline --since xyz');
    expect(bad.output).toContain('--since xyz is not a time. Valid: a duration ago');
    for (let i = 0; i < 45; i++) await console.handleLine('workers pushizo');
    const timeline = await console.handleLine('timeline');
    expect(timeline.reply?.ok).toBe(true);
    expect(timeline.output).not.toContain('direct messages');
    expect(timeline.output.match(/looked at workers pushizo/g)?.length).toBeGreaterThanOrEqual(45);
  });

  it('counts waiting one way: the status row of a queue with prioritized jobs says what its pause preview says, and help says what waiting means', async () => {
    const console = session('U0ALICE');
    const ios = seeded.plan.pushizo.queues.find((q) => q.name === 'dispatch-ios')!;
    expect(ios.prioritized).toBeGreaterThan(0);
    const status = await console.handleLine('status pushizo/dispatch-ios');
    const row = status.output.split('\n').find((l) => l.startsWith('dispatch-ios '))!;
    const heading = status.output.split('\n').find((l) => l.startsWith('queue '))!;
    expect(heading).toMatch(/^queue +waiting +active +delayed +of which prio +failed/);
    const [, waiting, , , prio] = row.trim().split(/\s+/);
    expect(waiting).toBe(String(ios.waiting + ios.prioritized));
    expect(prio).toBe(String(ios.prioritized));
    const pause = await console.handleLine('pause pushizo/dispatch-ios');
    expect(pause.output).toContain(
      `pause pushizo/dispatch-ios: ${waiting} waiting jobs stop being picked up`,
    );
    await console.handleLine(`deny ${requestOf(pause).id}`);
    const help = await console.handleLine('help');
    expect(help.output).toContain('Waiting is every job ready to run, prioritized ones included');
  });

  it('posts shared read-only answers in the channel and keeps the asker’s own ones ephemeral, as help says', async () => {
    const console = session('U0BOB');
    const help = (await console.handleLine('help')).output;
    const said = (list: string) => (new RegExp(`${list}: ([^.]*)\\.`).exec(help)?.[1] ?? '').split(', ');
    const shared = said('Everyone in the channel sees');
    const own = said('Only you see');
    expect(shared).toEqual([
      'status',
      'dlq',
      'workers',
      'redis',
      'results',
      'job',
      'alerts',
      'stuck',
      'trend',
      'why',
    ]);
    expect(own).toEqual(['pending', 'audit', 'timeline', 'help', 'errors and refusals']);
    own.pop();
    // A failed job of the demo, for `job`.
    const dlq = (await console.handleLine('dlq pushizo/dispatch-ios')).reply;
    const jobId = (dlq?.data as { jobs: { id: string }[] } | undefined)?.jobs[0]?.id ?? '';
    const words: Record<string, string> = {
      status: 'status',
      dlq: 'dlq pushizo/dispatch-ios',
      redis: 'redis pushizo',
      results: 'results zeus',
      job: `job pushizo/dispatch-ios ${jobId}`,
      workers: 'workers',
      stuck: 'stuck zeus',
      alerts: 'alerts',
      trend: 'trend pushizo/dispatch-ios',
      why: 'why pushizo',
      help: 'help',
      pending: 'pending',
      audit: 'audit',
      timeline: 'timeline',
    };
    for (const verb of [...shared, ...own]) {
      const reply = (await console.handleLine(words[verb]!)).reply;
      expect(reply?.ok, verb).toBe(true);
      expect(reply?.visibility, verb).toBe(shared.includes(verb) ? 'in_channel' : 'ephemeral');
    }
  });

  it('records and shows why a look failed and why the guards refused: a typo is not "looked at", a rate limit is named', async () => {
    const alice = session('U0ALICE');
    await alice.handleLine('status pushzio');
    const bob = session('U0BOB');
    // Actions that ran count against the per-minute limit (10 in the demo): asking to pause a
    // queue and withdrawing the request, again and again, reaches it.
    let refused: Awaited<ReturnType<typeof bob.handleLine>> | undefined;
    let refusedVerb: string | undefined;
    for (let i = 0; i < 12 && !refused; i++) {
      const asked = await bob.handleLine('pause pushizo/events');
      if (asked.reply?.error?.code === 'RateLimited') {
        [refused, refusedVerb] = [asked, 'pause'];
        break;
      }
      const id = (asked.reply?.data as { request?: { id: string } } | undefined)?.request?.id;
      const withdrawn = await bob.handleLine(`deny ${id}`);
      if (withdrawn.reply?.error?.code === 'RateLimited') [refused, refusedVerb] = [withdrawn, 'deny'];
    }
    expect(refused).toBeDefined();
    const entries = await app.audit.recent(50);
    const typo = entries.find((e) => e.action === 'command.status' && e.target === 'pushzio');
    expect(typo).toMatchObject({ outcome: 'error', error: 'UnknownSystem' });
    const limited = entries.find((e) => e.action === 'denied' && e.actorId === 'U0BOB');
    expect(limited?.params).toMatchObject({ command: refusedVerb, code: 'RateLimited' });

    const timeline = (await bob.handleLine('timeline')).output;
    expect(timeline).toContain(
      '| U0ALICE | asked for status pushzio, which failed: there is no such system |',
    );
    expect(timeline).not.toContain('looked at status pushzio');
    expect(timeline).toMatch(
      new RegExp(`\\| U0BOB \\| was refused ${refusedVerb}[^|]*: too many commands in a minute \\|`),
    );
    expect(timeline).not.toContain('by the guards');
  });

  it('did you mean: a queue without `celery:` or without its system, verbs one slip away or by another name, and a mistyped option', async () => {
    const console = session();
    const said = async (line: string) => (await console.handleLine(line)).output;
    expect(await said('dlq zeus/alarm_processing')).toContain(
      '`zeus` has no queue called `alarm_processing`. Did you mean `zeus/celery:alarm_processing`?',
    );
    expect(await said('dlq alarm_processing')).toContain(
      'Name the queue as system/queue. Did you mean `zeus/celery:alarm_processing`?',
    );
    expect(await said('status dispatch-ios')).toContain(
      'There is no system called `dispatch-ios`. Did you mean `pushizo/dispatch-ios`?',
    );
    expect(await said('pause dispatch-sms')).toContain('Did you mean `pushizo/dispatch-sms`?');
    expect(await said('al')).toContain('`al` is not a /queue command. Did you mean `alerts`?');
    expect(await said('waitng')).toContain('Did you mean `pending`?');
    expect(await said('verfy')).toContain('Did you mean `audit verify`?');
    const flag = await said('status --jsn');
    expect(flag).toContain('`--jsn` is not an option here. Did you mean `--json`?');
    expect(flag).not.toContain('no system');
  });

  it('says so when a number is typed before any message has buttons', async () => {
    const outcome = await session().handleLine('1');
    expect(outcome.output).toContain('no buttons');
    expect(outcome.reply).toBeUndefined();
  });

  it('runs a script line by line, echoing each command, stopping at quit and counting failed answers', async () => {
    const out: string[] = [];
    const { failures } = await runLines(session(), ['status zeus', 'dlq nope/x', 'quit', 'status'], (t) =>
      out.push(t),
    );
    const text = out.join('');
    expect(text).toContain('> status zeus\n');
    expect(text).toContain('celery:alarm_processing');
    expect(text).toContain('> dlq nope/x\n');
    expect(text).not.toContain('> status\n');
    expect(failures).toBe(1);
  });

  it('refuses the requester pressing their own Approve and a viewer pressing it, then the second operator approves and the queue is paused', async () => {
    const alice = session('U0ALICE');
    const asked = await alice.handleLine('/queue pause pushizo/dispatch-sms');
    expect(asked.reply?.ok).toBe(true);
    const id = requestOf(asked).id;
    expect(requestOf(asked).status).toBe('pending');
    const approve = alice.buttons.find((b) => b.actionId === ActionId.Approve)!;
    expect(approve.value).toBe(id);

    const own = await alice.handleLine(String(approve.index));
    expect(own.reply?.ok).toBe(false);
    expect(own.reply?.error?.code).toBe('SelfApproval');

    await alice.handleLine(':user U0DAVE');
    const viewer = await alice.handleLine(String(approve.index));
    expect(viewer.reply?.ok).toBe(false);
    expect(viewer.output).toContain('operator');
    expect((await app.approvals.get(id))?.status).toBe('pending');

    await alice.handleLine(':user U0CAROL');
    const done = await alice.handleLine(`approve ${id}`);
    expect(done.reply?.ok).toBe(true);
    expect(requestOf(done).status).toBe('done');
    const status = await alice.handleLine('status pushizo/dispatch-sms');
    const data = status.reply?.data as { systems: { queues: { name: string; isPaused: boolean }[] }[] };
    const queues = data.systems[0]!.queues;
    expect(queues.find((q) => q.name === 'dispatch-sms')?.isPaused).toBe(true);
    expect(await app.audit.verify()).toMatchObject({ ok: true });

    // resuming needs no approval in the demo's policies: it runs at once
    const resumed = await alice.handleLine('resume pushizo/dispatch-sms');
    expect(requestOf(resumed).status).toBe('done');
  });
});
