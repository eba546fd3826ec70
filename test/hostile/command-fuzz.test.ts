import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { parseConfig } from '../../src/config/load.js';
import { celeryEnvelope } from '../../src/demo/seed-celery.js';
import { createLogger } from '../../src/lib/logger.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import { connectionFor, EVERY_VERB, randomName, waitFor } from '../commands/fixture.js';
import { brief, isPidboxKey, keyOf, type RedisWatch, type SeenCommand, watchRedis } from './redis-watch.js';

/**
 * The whole command pipeline (parse → guards → command → blocks, with the store, approvals and
 * audit) fed hostile words over real BullMQ queues and Celery lists in a Redis of its own, so that
 * MONITOR sees every command the bot sends. For any words, from anyone, in any channel:
 * an answer that passes the Slack limits validator, a coded error on one line when refused,
 * never "something went wrong", and no Redis write unless an approved action ran, and then only
 * to the keys of the queue that request named.
 */

/** Queue names with glob characters next to the names those globs would also match. */
const BULL_QUEUES = ['dispatch-ios', 'we*rd', 'weXrd', 'q?x', 'qax', 'br[ack', 'events'] as const;
const CELERY_QUEUES = ['celery', 'celery:alarm_processing', 'cel*ery', 'celXery'] as const;
const OPERATORS = ['U0ALICE', 'U0BOB'] as const;
const ACTORS = [...OPERATORS, 'U0ADMIN', 'U0VIEWER', 'W0STRANGER'] as const;
const CHANNELS = ['C0INCIDENT', 'C0OTHER', 'C0RANDOM', undefined] as const;

let redis: PrivateRedis;
let admin: Redis;
let ops: QueueOps;
let dir: string;
const prefix = randomName('fz');
const queues: Queue[] = [];
/** Request ids seen so far (made in beforeAll, or by the fuzz itself): the forged-id pool. */
const requestIds: string[] = [];
/** The request made in C0OTHER: every other channel must not see it. */
let otherChannelRequest: string;

let watch: RedisWatch;
const settle = () => watch.settle();
const writesIn = (seen: readonly SeenCommand[]) => watch.writesIn(seen);
const isPidbox = isPidboxKey;

const shown = (reply: Reply) => `${reply.message.text}\n${JSON.stringify(reply.message.blocks)}`;

beforeAll(async () => {
  redis = await startPrivateRedis();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-fuzz-'));

  // Real BullMQ: completed and failed jobs made by a worker, then waiting, delayed, prioritized.
  const connection = connectionFor(redis.url);
  for (const name of BULL_QUEUES) {
    const queue = new Queue(name, { connection, prefix });
    queues.push(queue);
    const worker = new Worker(
      name,
      async (job) => {
        if (job.data.fail) throw new Error(`<!channel> *${name}* failed \`here\` <@U0ALICE>`);
        return 'ok';
      },
      { connection, prefix, concurrency: 5 },
    );
    await queue.addBulk([
      { name: 'ok', data: {} },
      { name: 'bad', data: { fail: true, secret: 'JOB-PAYLOAD-MARKER' } },
      { name: 'bad', data: { fail: true } },
    ]);
    await waitFor(`${name} processed`, async () => {
      const c = await queue.getJobCounts('completed', 'failed');
      return c.completed === 1 && c.failed === 2;
    });
    await worker.close();
    await queue.addBulk([
      { name: 'wait', data: { secret: 'JOB-PAYLOAD-MARKER' } },
      { name: 'later', data: {}, opts: { delay: 3_600_000 } },
      { name: 'vip', data: {}, opts: { priority: 2 } },
    ]);
  }
  // Celery messages exactly as Celery 5 publishes them, in lists whose names hold a glob.
  for (const queue of CELERY_QUEUES) {
    await admin.lpush(
      queue,
      ...Array.from({ length: 3 }, (_, i) =>
        celeryEnvelope({ queue, task: 'zeus.tasks.notify', args: [i, 'JOB-PAYLOAD-MARKER'], priority: 0 }),
      ),
    );
  }

  const config = parseConfig(
    `slack: { allowedChannels: [C0INCIDENT, C0OTHER] }
store: sqlite:${join(dir, 'store.db')}
archive: { dir: ${join(dir, 'archive')} }
roles: { viewer: ["*"], operator: [U0ALICE, U0BOB], admin: [U0ADMIN] }
policies:
  pause: { role: operator, approvals: 1 }
  resume: { role: operator, approvals: 1 }
  retry: { role: operator, approvals: 1 }
  scale: { role: operator, approvals: 1 }
  purge: { role: admin, approvals: 1 }
  revoke: { role: operator, approvals: 1 }
  fail: { role: operator, approvals: 1 }
  undo: { role: admin, approvals: 1 }
rateLimit: { perUserPerMinute: 10000 }
systems:
  - name: pushizo
    type: bullmq
    redis: ${redis.url}
    prefix: ${prefix}
    workers: { ios: { type: compose, project: fz, file: ${join(dir, 'none.yml')}, service: w, min: 0, max: 5 } }
  - name: zeus
    type: celery
    redis: ${redis.url}
    queues: ["celery", "celery:alarm_processing", "cel*ery", "celXery"]
    inspectTimeoutMs: 50
    workers: { pool: { type: celery-pool, min: 1, max: 8 } }
`,
    {},
  );
  ops = await createQueueOps({ config, env: {}, logger: createLogger({ level: 'silent' }) });

  watch = await watchRedis(redis.url);

  // Requests waiting in two channels: fuzzed approvals and denials aim at them.
  const asked = await ops.dispatcher.handle(ask(['pause', 'pushizo/dispatch-ios'], 'U0ALICE', 'C0OTHER'));
  otherChannelRequest = (asked.data as { request: { id: string } }).request.id;
  const purge = await ops.dispatcher.handle(
    ask(['purge', 'pushizo/we*rd', 'waiting'], 'U0ADMIN', 'C0INCIDENT'),
  );
  requestIds.push(otherChannelRequest, (purge.data as { request: { id: string } }).request.id);
  await settle();
}, 120_000);

afterAll(async () => {
  watch?.close();
  await ops?.close();
  for (const queue of queues) await queue.close();
  admin?.disconnect();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function ask(
  words: string[],
  actor: string,
  channel: string | undefined,
  locale: 'en' | 'tr' = 'en',
): Request {
  return channel === undefined
    ? { actor: { id: actor, osUser: 'fuzzer', host: 'fuzz-host' }, via: 'cli', words, locale }
    : { actor: { id: actor, name: actor.toLowerCase() }, via: 'slack', channel, words, locale };
}

const VERBS = [
  ...EVERY_VERB,
  'STATUS',
  'Dlq',
  'ѕtatus', // Cyrillic ѕ
  'ｓｔａｔｕｓ', // fullwidth
  'stat*',
  '',
];

const TARGETS = [
  ...BULL_QUEUES.map((q) => `pushizo/${q}`),
  ...CELERY_QUEUES.map((q) => `zeus/${q}`),
  'pushizo',
  'zeus',
  'pushizo/ios',
  'zeus/pool',
  'pushizo/*',
  'pushizo/we?rd',
  'pushizo/we[*]rd',
  '*',
  '*/*',
  'zeus/celery*',
  'zeus/cel?ery',
  'pushizo/',
  '/events',
  '/',
  'PUSHIZO/events',
  'pushizo/Events',
  'ｐｕｓｈｉｚｏ/events',
  'pushizo/еvents', // Cyrillic е
  'pushizo/events\n',
  'pushizo/ev\u0000ents',
  'pushizo/ev\u202Eents',
  'pushizo/events/extra',
  'pushizo/<!channel>',
  '<@U0ALICE>',
  '`pushizo`',
  '*pushizo*',
  'x'.repeat(256),
  'y'.repeat(257),
];

const COUNTS = [
  '-1',
  '0',
  '1',
  '3',
  '1.5',
  '1e9',
  '1e400',
  'NaN',
  'Infinity',
  '-0',
  '0x10',
  '99999999999999999999',
  '1_000',
  '٣', // Arabic-Indic three
  '３', // fullwidth three
  '',
  ' ',
  'all',
  'waiting',
  'failed',
  'delayed',
  'ALL',
  '30m',
  '2h',
  '-5m',
  '99999h',
  '1h',
  '24h',
  '--terminate',
  '--signal',
  'KILL',
  '--since',
  '--until',
  '--out',
  'verify',
  '--limit=-3',
];

const word = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...TARGETS) },
  { weight: 4, arbitrary: fc.constantFrom(...COUNTS) },
  { weight: 2, arbitrary: fc.constantFrom('r-00000000', 'a-00000000', 'r-', 'R-XYZ', '1', '2', '3') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
);

/** A real request id from the pool (another channel's, or one the fuzz made), by index. */
const realId = fc.nat();
const commandLine = fc.record({
  verb: fc.constantFrom(...VERBS),
  args: fc.array(
    fc.oneof({ weight: 5, arbitrary: word }, { weight: 1, arbitrary: realId.map((i) => ({ id: i })) }),
    {
      maxLength: 4,
    },
  ),
  actor: fc.constantFrom(...ACTORS),
  channel: fc.constantFrom(...CHANNELS),
  locale: fc.constantFrom('en' as const, 'tr' as const),
});

/**
 * Command lines that get past the guards: an action on a real (glob-named) target by someone who
 * holds the role, in an allowed channel, and approvals of the requests they make, so that the
 * fuzz also runs approved actions and checks where they write.
 */
const bullTarget = fc.constantFrom(...BULL_QUEUES.map((q) => `pushizo/${q}`));
const anyTarget = fc.constantFrom(
  ...BULL_QUEUES.map((q) => `pushizo/${q}`),
  ...CELERY_QUEUES.map((q) => `zeus/${q}`),
);
const poolId = realId.map((i) => ({ id: i }));
type Arg = string | { id: number };
const wellFormedArgs: fc.Arbitrary<[string, Arg[]]> = fc.oneof(
  fc.tuple(fc.constantFrom('pause', 'resume'), fc.tuple(anyTarget)),
  fc.tuple(fc.constant('retry'), fc.tuple(anyTarget, fc.constantFrom('all', '1', '2', 'nope'))),
  fc.tuple(fc.constant('purge'), fc.tuple(anyTarget, fc.constantFrom('waiting', 'failed', 'delayed', 'all'))),
  fc.tuple(
    fc.constant('scale'),
    fc.tuple(fc.constantFrom('pushizo/ios', 'zeus/pool'), fc.constantFrom(...COUNTS)),
  ),
  fc.tuple(fc.constant('fail'), fc.tuple(bullTarget, fc.constantFrom('1', '2', '3'), fc.constant('fuzz'))),
  fc.tuple(fc.constant('revoke'), fc.tuple(fc.constant('zeus'), fc.uuid())),
  // Approvals and denials of real requests, from anywhere: the fuzz's own, or another channel's.
  fc.tuple(fc.constantFrom('approve', 'approve', 'approve', 'deny', 'undo'), fc.tuple(poolId)),
);
const wellFormed = fc
  .record({
    verbArgs: wellFormedArgs,
    actor: fc.constantFrom('U0ALICE', 'U0BOB', 'U0ADMIN'),
    channel: fc.constantFrom('C0INCIDENT', 'C0OTHER'),
    locale: fc.constantFrom('en' as const, 'tr' as const),
  })
  .map(({ verbArgs: [verb, args], ...rest }) => ({ verb, args, ...rest }));

/** The BullMQ keys of one queue, and the Celery keys (list, priority lists, paused hash) of one. */
function ownsKey(target: string, key: string): boolean {
  if (isPidbox(key)) return true;
  const slash = target.indexOf('/');
  const system = target.slice(0, slash);
  const queue = target.slice(slash + 1);
  if (system === 'pushizo') return key.startsWith(`${prefix}:${queue}:`) || key === `${prefix}:${queue}`;
  return key === queue || key.startsWith(`${queue}\x06\x16`) || key === 'queue-ops:paused';
}

describe('the command pipeline under hostile words, over real queues and a Redis watched by MONITOR', () => {
  it("treats an approval or denial of another channel's request as unknown there, and writes nothing", async () => {
    for (const verb of ['approve', 'deny']) {
      const reply = await ops.dispatcher.handle(ask([verb, otherChannelRequest], 'U0BOB', 'C0INCIDENT'));
      expect(reply.error?.code).toBe('UnknownRequest');
      expect(shown(reply)).not.toContain('dispatch-ios');
    }
    const commands = await settle();
    // MONITOR saw the bot's reads (the store's lookups aside, a status read has some) …
    await ops.dispatcher.handle(ask(['status', 'pushizo/events'], 'U0BOB', 'C0INCIDENT'));
    expect((await settle()).length).toBeGreaterThan(0);
    // … and no write from the refused approval or denial.
    expect(writesIn(commands).filter((w) => !isPidbox(keyOf(w)))).toEqual([]);
    expect((await ops.approvals.get(otherChannelRequest))?.status).toBe('pending');
  });

  it('shows a name with a line break in it (typed on the command line) as \\n, keeping the answer one line', async () => {
    const reply = await ops.dispatcher.handle(ask(['status', 'pushizo/events\n'], 'U0ALICE', undefined));
    expect(reply.error?.code).toBe('UnknownQueue');
    expect(reply.message.text).toContain(
      '`pushizo` has no queue called `events\\n`. Did you mean `pushizo/events`?',
    );
    expect(reply.message.text).not.toContain('\n');
    const tr = await ops.dispatcher.handle(
      ask(['dlq', 'pushizo/events', '3\u2028'], 'U0ALICE', undefined, 'tr'),
    );
    expect(tr.error?.code).toBe('BadArgument');
    expect(tr.message.text).toContain('3\\u2028');
    expect(tr.message.text).not.toMatch(/[\n\u2028]/);
  });

  it('sees the writes of an approved action, all of them to the glob-named queue it names and none to its look-alike', async () => {
    const asked = await ops.dispatcher.handle(ask(['pause', 'pushizo/q?x'], 'U0ALICE', 'C0INCIDENT'));
    const id = (asked.data as { request: { id: string } }).request.id;
    expect(writesIn(await settle())).toEqual([]);
    const approved = await ops.dispatcher.handle(ask(['approve', id], 'U0BOB', 'C0INCIDENT'));
    expect(approved.ok).toBe(true);
    const writes = writesIn(await settle());
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.filter((w) => !ownsKey('pushizo/q?x', keyOf(w))).map(brief)).toEqual([]);
    expect(await queues[BULL_QUEUES.indexOf('q?x')]!.isPaused()).toBe(true);
    expect(await queues[BULL_QUEUES.indexOf('qax')]!.isPaused()).toBe(false);
    const resumed = await ops.dispatcher.handle(ask(['resume', 'pushizo/q?x'], 'U0ALICE', 'C0INCIDENT'));
    const resumeId = (resumed.data as { request: { id: string } }).request.id;
    await ops.dispatcher.handle(ask(['approve', resumeId], 'U0BOB', 'C0INCIDENT'));
    await settle();
  });

  it('names the word too many after a pause target instead of asking for the target it was given', async () => {
    const reply = await ops.dispatcher.handle(ask(['pause', 'pushizo/we*rd', '2'], 'U0ALICE', 'C0INCIDENT'));
    expect(reply.error?.code).toBe('UsageError');
    expect(reply.message.text).toContain('Unexpected `2`.');
    expect(reply.message.text).toContain('/queue pause');
    expect(writesIn(await settle())).toEqual([]);
  });

  it('answers every command line with a valid message, one-line coded refusals and no write it was not asked for', async () => {
    const answered = new Set<string>();
    const refused = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 3, arbitrary: commandLine }, { weight: 2, arbitrary: wellFormed }),
        async ({ verb, args, actor, channel, locale }) => {
          const words = [
            verb,
            ...args.map((a) =>
              typeof a === 'string' ? a : (requestIds[a.id % Math.max(1, requestIds.length)] ?? 'r-00000000'),
            ),
          ];
          const before = verb === 'approve' ? await statusesOf(requestIds) : undefined;
          let reply: Reply;
          try {
            reply = await ops.dispatcher.handle(ask(words, actor, channel, locale));
          } catch (error) {
            throw new Error(`handle() rejected for ${JSON.stringify(words)}: ${String(error)}`);
          }
          const context = `${JSON.stringify({ words, actor, channel, locale })} → ${shown(reply)}`;
          (reply.ok ? answered : refused).add(String(reply.error?.code ?? verb));
          expect(reply.error?.code, context).not.toBe('Internal');
          expect(validateMessage(reply.message), context).toEqual([]);
          const request = (reply.data as { request?: { id?: string } } | undefined)?.request;
          if (request?.id && !requestIds.includes(request.id)) requestIds.push(request.id);
          // A refusal is the asker's alone; an approved request's failed outcome is the channel's.
          if (!reply.ok && !request) {
            expect(reply.error?.code, context).toBeTruthy();
            expect(reply.visibility, context).toBe('ephemeral');
            // A denial may add a line of its own (why a role did not resolve); everything else is one.
            if (!['Forbidden', 'WrongChannel', 'TwoFactorRequired'].includes(String(reply.error?.code)))
              expect(reply.message.text.includes('\n'), context).toBe(false);
          }
          // Nothing from a job (its data) is ever shown, nor a mention typed by someone or thrown by a job.
          expect(shown(reply), context).not.toContain('JOB-PAYLOAD-MARKER');
          expect(shown(reply), context).not.toMatch(/<!channel>|<!here>|<@U0ALICE>/);

          const writes = writesIn(await settle());
          // Only an approval that moved a request on may have run its action.
          const after = before ? await statusesOf(requestIds) : undefined;
          const ran =
            before && after
              ? requestIds.filter(
                  (id) =>
                    before.get(id) === 'pending' && after.get(id) !== 'pending' && after.get(id) !== 'denied',
                )
              : [];
          if (ran.length === 0) {
            expect(
              writes.filter((w) => !isPidbox(keyOf(w)) && w.args[0] !== 'publish').map(brief),
              context,
            ).toEqual([]);
            return;
          }
          const targets = await Promise.all(ran.map(async (id) => (await ops.approvals.get(id))!.target));
          for (const write of writes) {
            if (write.args[0] === 'publish') continue;
            expect(
              targets.some((t) => ownsKey(t, keyOf(write))),
              `${context}: ${brief(write)} outside ${targets.join(', ')}`,
            ).toBe(true);
          }
        },
      ),
      { numRuns: 250 },
    );
    // Not vacuous: commands of every kind were answered, and refused for many reasons.
    expect(answered.size).toBeGreaterThan(5);
    expect(refused.size).toBeGreaterThan(5);
  }, 120_000);
});

async function statusesOf(ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of ids) out.set(id, (await ops.approvals.get(id))?.status ?? 'missing');
  return out;
}
