import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { requestMessage } from '../../src/approvals/blocks.js';
import {
  type Authority,
  type Caller,
  createApprovals,
  type Executor,
  type LeaseOptions,
} from '../../src/approvals/service.js';
import { createAudit } from '../../src/audit/audit.js';
import type { Role } from '../../src/config/schema.js';
import { OpsError } from '../../src/errors.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { ActionRequest, Store } from '../../src/store/store.js';
import { withFaults } from '../helpers/faulty-store.js';

const roles: Record<string, Role> = {
  U0ALICE: 'operator',
  U0BOB: 'operator',
  U0CAROL: 'admin',
  U0VIEW: 'viewer',
};
const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Role table a test can change mid-flight (someone leaves on-call). */
function authorityFrom(table: Record<string, Role>, twoFactor: Record<string, boolean> = {}): Authority {
  return {
    async has(userId, role) {
      const held = table[userId];
      return held !== undefined && rank[held] >= rank[role];
    },
    async has2fa(userId) {
      return twoFactor[userId];
    },
  };
}

interface Harness {
  dir: string;
  store: Store;
  clock: { now: Date };
  executed: ActionRequest[];
  make(opts?: {
    approvals?: number;
    table?: Record<string, Role>;
    executor?: Executor;
    require2fa?: boolean;
    twoFactor?: Record<string, boolean>;
    cliSameOsUser?: 'allow' | 'refuse';
    /** `cli.users`: OS account → the Slack ids it is. */
    cliUsers?: Record<string, string[]>;
    /** The role checks (a test may hold them at a barrier); `table`'s otherwise. */
    authority?: Authority;
    purgeApprovals?: number;
    lease?: LeaseOptions;
    /** The store this instance writes through (a fault-injecting wrapper); the harness's otherwise. */
    store?: Store;
  }): ReturnType<typeof createApprovals>;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

async function harness(): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'qo-approvals-'));
  const path = join(dir, 'store.db');
  const h: Harness = {
    dir,
    store: createSqliteStore(path),
    clock: { now: new Date('2026-11-29T08:00:00.000Z') },
    executed: [],
    make(opts = {}) {
      const store = opts.store ?? h.store;
      const now = () => new Date(h.clock.now);
      const audit = createAudit({ store, now });
      const executor: Executor =
        opts.executor ??
        (async (request) => {
          h.executed.push(request);
          return { queue: request.params.queue, isPaused: true };
        });
      return createApprovals({
        store,
        audit,
        authority: opts.authority ?? authorityFrom(opts.table ?? roles, opts.twoFactor),
        config: {
          policies: {
            pause: { role: 'operator', approvals: opts.approvals ?? 1 },
            resume: { role: 'operator', approvals: 0 },
            retry: { role: 'operator', approvals: 0, bulkApprovals: 0 },
            scale: { role: 'operator', approvals: 1 },
            restart: { role: 'operator', approvals: 1 },
            purge: { role: 'admin', approvals: opts.purgeApprovals ?? 1 },
            revoke: { role: 'operator', approvals: 0 },
            fail: { role: 'operator', approvals: 0 },
            undo: { role: 'admin', approvals: 1 },
            'expire-results': { role: 'admin', approvals: 1 },
            'rate-limit': { role: 'operator', approvals: 1 },
            concurrency: { role: 'operator', approvals: 1 },
          },
          approvals: {
            ttlMinutes: 15,
            require2fa: opts.require2fa ?? false,
            cliSameOsUser: opts.cliSameOsUser ?? 'refuse',
          },
          cli: { users: opts.cliUsers ?? {} },
        },
        executors: { pause: executor, resume: executor, purge: executor },
        now,
        ...(opts.lease ? { lease: opts.lease } : {}),
        bookkeepingRetry: { attempts: 3, backoffMs: 5 },
      });
    },
    async reopen() {
      await h.store.close();
      h.store = createSqliteStore(path);
      await h.store.migrate();
    },
    async close() {
      await h.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await h.store.migrate();
  return h;
}

const alice = { id: 'U0ALICE', name: 'alice', via: 'slack' as const, channel: 'C0INC' };
const bob = { id: 'U0BOB', name: 'bob', via: 'slack' as const, channel: 'C0INC' };
const carol = { id: 'U0CAROL', name: 'carol', via: 'slack' as const, channel: 'C0INC' };
const viewer = { id: 'U0VIEW', name: 'vic', via: 'slack' as const, channel: 'C0INC' };

const submitPause = (approvals: ReturnType<typeof createApprovals>, actor: Caller = alice) =>
  approvals.submit({
    actor,
    action: 'pause',
    target: 'pushizo/dispatch-ios',
    params: { system: 'pushizo', queue: 'dispatch-ios' },
    preview: 'pause pushizo/dispatch-ios: 48,211 waiting jobs stop being picked up',
  });

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpsError);
  return (error as OpsError).code;
};

describe('two-person approval', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('runs an action once a second person approves it, and records who did what in a verifiable chain', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    expect(request.status).toBe('pending');
    expect(h.executed).toHaveLength(0);
    const done = await approvals.approve(request.id, bob);
    expect(done.status).toBe('done');
    expect(done.approvals.map((a) => a.userId)).toEqual(['U0BOB']);
    expect(done.result).toEqual({ queue: 'dispatch-ios', isPaused: true });
    expect(h.executed).toHaveLength(1);
    const audit = createAudit({ store: h.store, now: () => h.clock.now });
    const actions = (await audit.recent(10)).map((e) => `${e.actorId} ${e.action} ${e.outcome}`).reverse();
    expect(actions).toEqual([
      'U0ALICE request.created requested',
      'U0BOB request.approved approved',
      'U0BOB request.executing executing',
      'U0BOB action.pause done',
    ]);
    expect(await audit.verify()).toMatchObject({ ok: true, count: 4 });
  });

  it('a waiting twin whose ttl ran out (no sweep yet) is expired and audited, and the new ask opens a request', async () => {
    const approvals = h.make();
    const heard: string[] = [];
    approvals.onChange(async (r) => {
      heard.push(`${r.id}:${r.status}`);
    });
    const first = await submitPause(approvals);
    h.clock.now = new Date(h.clock.now.getTime() + 15 * 60_000);
    const second = await submitPause(approvals, bob);
    expect(second.id).not.toBe(first.id);
    expect((await approvals.get(first.id))?.status).toBe('expired');
    expect((await approvals.pending()).map((r) => r.id)).toEqual([second.id]);
    expect(heard).toEqual([`${first.id}:pending`, `${first.id}:expired`, `${second.id}:pending`]);
    const audit = createAudit({ store: h.store, now: () => h.clock.now });
    const trail = (await audit.recent(10)).reverse().map((e) => `${e.action}:${e.params?.request}`);
    expect(trail).toEqual([
      `request.created:${first.id}`,
      `request.expired:${first.id}`,
      `request.created:${second.id}`,
    ]);
  });

  it('never lets the requester approve their own request', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    expect(await codeOf(approvals.approve(request.id, alice))).toBe('SelfApproval');
    expect((await approvals.get(request.id))?.status).toBe('pending');
    expect(h.executed).toHaveLength(0);
  });

  it('refuses a viewer pressing Approve, checking the role at the moment of approving', async () => {
    const table = { ...roles };
    const approvals = h.make({ table });
    const request = await submitPause(approvals);
    expect(await codeOf(approvals.approve(request.id, viewer))).toBe('Forbidden');
    // Bob leaves on-call after the request was made: his approval no longer counts.
    delete (table as Record<string, Role>).U0BOB;
    expect(await codeOf(approvals.approve(request.id, bob))).toBe('Forbidden');
    expect(h.executed).toHaveLength(0);
  });

  it('checks the requester again when the action executes', async () => {
    const table = { ...roles };
    const approvals = h.make({ table });
    const request = await submitPause(approvals);
    delete (table as Record<string, Role>).U0ALICE;
    const outcome = await approvals.approve(request.id, bob);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/requester no longer allowed/);
    expect(h.executed).toHaveLength(0);
  });

  it('checks every earlier approver again when the action executes: one removed from the role no longer counts', async () => {
    const table = { ...roles, U0DAVE: 'operator' as Role };
    const approvals = h.make({ approvals: 2, table });
    const request = await submitPause(approvals);
    expect((await approvals.approve(request.id, bob)).status).toBe('pending');
    // Bob leaves on-call after approving; Carol's approval completes the count.
    delete (table as Record<string, Role>).U0BOB;
    const outcome = await approvals.approve(request.id, carol);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe(
      'approval by bob no longer counts: bob no longer holds the `operator` role, so it did not run',
    );
    expect(JSON.stringify(requestMessage(outcome, 'en').blocks)).toContain(
      'approval by bob no longer counts',
    );
    expect(h.executed).toHaveLength(0);
  });

  it('checks every earlier approver for two-factor again when an admin action executes', async () => {
    const twoFactor: Record<string, boolean> = { U0CAROL: true, U0DAVE: true, U0ERIN: true };
    const approvals = h.make({
      require2fa: true,
      purgeApprovals: 2,
      table: { ...roles, U0DAVE: 'admin', U0ERIN: 'admin' },
      twoFactor,
    });
    const request = await approvals.submit({
      actor: carol,
      action: 'purge',
      target: 'pushizo/events',
      params: { system: 'pushizo', queue: 'events' },
      preview: 'purge',
    });
    await approvals.approve(request.id, { id: 'U0DAVE', name: 'dave', via: 'slack', channel: 'C0INC' });
    twoFactor.U0DAVE = false;
    const outcome = await approvals.approve(request.id, {
      id: 'U0ERIN',
      name: 'erin',
      via: 'slack',
      channel: 'C0INC',
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/approval by dave no longer counts: .*two-factor authentication for dave/);
    expect(h.executed).toHaveLength(0);
  });

  it('counts each approver once when two approvals are needed', async () => {
    const approvals = h.make({ approvals: 2 });
    const request = await submitPause(approvals);
    const first = await approvals.approve(request.id, bob);
    expect(first.status).toBe('pending');
    expect(await codeOf(approvals.approve(request.id, bob))).toBe('AlreadyApproved');
    const done = await approvals.approve(request.id, carol);
    expect(done.status).toBe('done');
    expect(h.executed).toHaveLength(1);
  });

  it('tells progress listeners how far a running action has come, and aborts it on shutdown', async () => {
    let signal: AbortSignal | undefined;
    const approvals = h.make({
      approvals: 0,
      executor: async (_request, run) => {
        run.progress({ done: 1, total: 3, phase: 'archiving' });
        run.progress({ done: 3, total: 3, phase: 'deleting' });
        signal = run.signal;
        return { purged: 3 };
      },
    });
    const seen: string[] = [];
    approvals.onProgress((request, p) => {
      seen.push(`${request.id}:${p.phase}:${p.done}/${p.total}`);
    });
    approvals.onProgress(() => {
      throw new Error('a broken display');
    });
    const done = await submitPause(approvals);
    expect(done.status).toBe('done');
    expect(seen).toEqual([`${done.id}:archiving:1/3`, `${done.id}:deleting:3/3`]);
    expect(signal?.aborted).toBe(false);
    approvals.abortExecutions();
    expect(signal?.aborted).toBe(true);
  });

  it('expires a request after the ttl so it cannot be approved, and tells listeners', async () => {
    const approvals = h.make();
    const seen: string[] = [];
    approvals.onChange(async (r) => {
      seen.push(r.status);
    });
    const request = await submitPause(approvals);
    h.clock.now = new Date(h.clock.now.getTime() + 15 * 60_000);
    expect(await codeOf(approvals.approve(request.id, bob))).toBe('RequestExpired');
    expect((await approvals.get(request.id))?.status).toBe('expired');
    // Told when it was created (waiting for someone) and when it expired.
    expect(seen).toEqual(['pending', 'expired']);
    expect(h.executed).toHaveLength(0);
  });

  it('expires due requests in the background sweep', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    expect(await approvals.expireDue()).toEqual([]);
    h.clock.now = new Date(h.clock.now.getTime() + 16 * 60_000);
    const expired = await approvals.expireDue();
    expect(expired.map((r) => r.id)).toEqual([request.id]);
    expect(await approvals.pending()).toEqual([]);
  });

  it('treats a request from another channel as unknown to a Slack click', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    expect(await codeOf(approvals.approve(request.id, { ...bob, channel: 'C0OTHER' }))).toBe(
      'UnknownRequest',
    );
    expect(await codeOf(approvals.approve('r-doesnotexist', bob))).toBe('UnknownRequest');
    expect(h.executed).toHaveLength(0);
  });

  it('executes once when the same click arrives twice at the same moment', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    const results = await Promise.allSettled([
      approvals.approve(request.id, bob),
      approvals.approve(request.id, bob),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(h.executed).toHaveLength(1);
  });

  it('executes once when two approvers click at the same moment', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    await Promise.allSettled([approvals.approve(request.id, bob), approvals.approve(request.id, carol)]);
    expect(h.executed).toHaveLength(1);
    expect((await approvals.get(request.id))?.status).toBe('done');
  });

  it('an unbound shell racing a Slack click against a bound requester is refused at once: a claim never counts as the second person', async () => {
    // Alice asks from her bound shell; Carol's `--user` (shell bora, unbound) and Bob's Slack click
    // arrive together. Before, both passed on their own and only the check at execution caught the
    // pair; now Carol's claim is refused before anything else is looked at, so only Bob's counts.
    const approvals = h.make({ approvals: 2, cliUsers: { alice: ['U0ALICE'] } });
    const request = await submitPause(approvals, { id: 'U0ALICE', via: 'cli', osUser: 'alice', host: 'ops' });
    const carolClaimed = { id: 'U0CAROL', via: 'cli' as const, osUser: 'bora', host: 'ops' };
    const [carol, bobs] = await Promise.allSettled([
      approvals.approve(request.id, carolClaimed),
      approvals.approve(request.id, bob),
    ]);
    expect(carol.status).toBe('rejected');
    expect((carol as PromiseRejectedResult).reason).toMatchObject({
      code: 'IdentityNotBound',
      params: { kind: 'claimed-vs-bound', osUser: 'bora', user: 'U0CAROL', bound: ['alice'] },
    });
    expect(bobs.status).toBe('fulfilled');
    expect(h.executed).toHaveLength(0);
    const final = await approvals.get(request.id);
    expect(final?.approvals.map((a) => a.userId)).toEqual(['U0BOB']);
    expect(final?.status).toBe('pending');
  });

  it('lets the requester withdraw, and a denied request can no longer be approved', async () => {
    const approvals = h.make();
    const request = await submitPause(approvals);
    expect(await codeOf(approvals.deny(request.id, viewer, 'no'))).toBe('Forbidden');
    const denied = await approvals.deny(request.id, alice, 'wrong queue');
    expect(denied).toMatchObject({ status: 'denied', deniedBy: 'U0ALICE', denyReason: 'wrong queue' });
    expect(await codeOf(approvals.approve(request.id, bob))).toBe('RequestNotPending');
    expect(h.executed).toHaveLength(0);
  });

  it('keeps a pending request across a restart, and it can be approved afterwards', async () => {
    const request = await submitPause(h.make());
    await h.reopen();
    const approvals = h.make();
    expect((await approvals.pending()).map((r) => r.id)).toEqual([request.id]);
    expect((await approvals.approve(request.id, bob)).status).toBe('done');
  });

  it('reports a request whose replica died mid-execution as interrupted once its lease runs out, and never runs it again', async () => {
    let release: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      release = resolve;
    });
    const dying = withFaults(h.store);
    const approvals = h.make({
      store: dying.store,
      lease: { ttlMs: 30_000, renewEveryMs: 5 },
      executor: async () => {
        await hanging;
        return {};
      },
    });
    const request = await submitPause(approvals);
    const stuck = approvals.approve(request.id, bob);
    await expect.poll(async () => (await h.store.getRequest(request.id))?.status).toBe('executing');
    // The process dies: from now on nothing it does reaches the store, its heartbeat included.
    dying.faults.dead = true;
    const startedAt = h.clock.now.getTime();
    const afterRestart = h.make();
    h.clock.now = new Date(startedAt + 29_000);
    expect(await afterRestart.recoverInterrupted()).toEqual([]);
    expect((await h.store.getRequest(request.id))?.status).toBe('executing');
    h.clock.now = new Date(startedAt + 30_000);
    const interrupted = await afterRestart.recoverInterrupted();
    expect(interrupted.map((r) => r.status)).toEqual(['interrupted']);
    expect(requestMessage(interrupted[0]!, 'en').text).toContain('Interrupted');
    release();
    await stuck;
    expect((await h.store.getRequest(request.id))?.status).toBe('interrupted');
    expect(await codeOf(afterRestart.approve(request.id, carol))).toBe('RequestNotPending');
    expect(h.executed).toHaveLength(0);
  });

  it('tells a running executor to stop when its lease was lost to a sweep (its store was out of reach for a whole lease)', async () => {
    const flaky = withFaults(h.store);
    let aborted = false;
    const approvals = h.make({
      store: flaky.store,
      lease: { ttlMs: 30_000, renewEveryMs: 5 },
      executor: async (_request, run) => {
        await new Promise<void>((resolve) => run.signal.addEventListener('abort', () => resolve()));
        aborted = true;
        return {};
      },
    });
    const request = await submitPause(approvals);
    flaky.faults.renewDown = true;
    const running = approvals.approve(request.id, bob);
    await expect.poll(async () => (await h.store.getRequest(request.id))?.status).toBe('executing');
    h.clock.now = new Date(h.clock.now.getTime() + 31_000);
    expect((await h.make().recoverInterrupted()).map((r) => r.id)).toEqual([request.id]);
    flaky.faults.renewDown = false;
    await expect.poll(() => aborted).toBe(true);
    expect((await running).status).toBe('interrupted');
  });

  it('keeps an execution longer than the old two-minute limit running while its replica renews the lease', async () => {
    let release: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lease = { ttlMs: 30_000, renewEveryMs: 5 };
    const approvals = h.make({
      lease,
      executor: async (r) => {
        await hanging;
        h.executed.push(r);
        return { queue: r.params.queue, isPaused: true };
      },
    });
    const request = await submitPause(approvals);
    const running = approvals.approve(request.id, bob);
    await expect.poll(async () => (await h.store.getRequest(request.id))?.status).toBe('executing');
    const sweeper = h.make({ lease });
    const startedAt = h.clock.now.getTime();
    // Five minutes of the fake clock, ten seconds at a time; after each step the heartbeat (real
    // timers, every 5 ms) pushes the lease 30 s past the new time, and the sweep leaves it alone.
    for (let elapsed = 10_000; elapsed <= 5 * 60_000; elapsed += 10_000) {
      h.clock.now = new Date(startedAt + elapsed);
      const renewedPast = startedAt + elapsed + lease.ttlMs;
      await expect
        .poll(async () => Date.parse((await h.store.getRequest(request.id))?.leaseUntil ?? ''))
        .toBeGreaterThanOrEqual(renewedPast);
      expect(await sweeper.recoverInterrupted()).toEqual([]);
    }
    release();
    const done = await running;
    expect(done.status).toBe('done');
    expect(Date.parse(done.finishedAt!) - Date.parse(done.startedAt!)).toBe(5 * 60_000);
    expect(h.executed).toHaveLength(1);
    expect(requestMessage(done, 'en').text).toContain('Done');
  });

  it('sweeps a request left approved when its start was never recorded to interrupted, saying it did not run', async () => {
    const flaky = withFaults(h.store);
    const approvals = h.make({ store: flaky.store });
    const seen: ActionRequest[] = [];
    approvals.onChange(async (r) => {
      seen.push(r);
    });
    const request = await submitPause(approvals);
    flaky.faults.failStart = 1;
    expect(await codeOf(approvals.approve(request.id, bob))).toBe('StartNotStored');
    expect((await h.store.getRequest(request.id))?.status).toBe('approved');
    // Within a lease's length a replica may still be about to start it.
    h.clock.now = new Date(h.clock.now.getTime() + 10_000);
    expect(await approvals.recoverInterrupted()).toEqual([]);
    h.clock.now = new Date(h.clock.now.getTime() + 25_000);
    const swept = await approvals.recoverInterrupted();
    expect(swept.map((r) => r.status)).toEqual(['interrupted']);
    expect(swept[0]!.error).toMatch(/never started/);
    // The Slack message updated in place says so, and no longer "Approved, starting".
    const shown = JSON.stringify(requestMessage(seen.at(-1)!, 'en').blocks);
    expect(shown).toContain('Interrupted before it started');
    expect(shown).toContain('It did not run');
    expect(shown).not.toContain('starting');
    const audit = createAudit({ store: h.store, now: () => h.clock.now });
    const last = (await audit.recent(1))[0]!;
    expect(`${last.action} ${last.outcome} ${last.error}`).toMatch(
      /request\.interrupted interrupted approved, but never started/,
    );
    expect(await codeOf(approvals.approve(request.id, carol))).toBe('RequestNotPending');
    expect(h.executed).toHaveLength(0);
  });

  it('records the real outcome when the action succeeded but the first writes of its outcome failed, and stores it on retry', async () => {
    const flaky = withFaults(h.store);
    const approvals = h.make({ store: flaky.store });
    const request = await submitPause(approvals);
    flaky.faults.failFinish = 2;
    const done = await approvals.approve(request.id, bob);
    expect(done.status).toBe('done');
    expect((await h.store.getRequest(request.id))?.status).toBe('done');
    const audit = createAudit({ store: h.store, now: () => h.clock.now });
    const actions = (await audit.recent(10)).map((e) => `${e.action} ${e.outcome}`).reverse();
    expect(actions).toEqual([
      'request.created requested',
      'request.approved approved',
      'request.executing executing',
      'action.pause done',
    ]);
    expect(h.executed).toHaveLength(1);
  });

  it('runs an action at once when its policy needs no approval, still through the audit', async () => {
    const approvals = h.make({ approvals: 0 });
    const request = await submitPause(approvals);
    expect(request.status).toBe('done');
    expect(h.executed).toHaveLength(1);
  });

  it('needs confirmed two-factor for admin actions when require2fa is on', async () => {
    const approvals = h.make({
      require2fa: true,
      table: { ...roles, U0DAVE: 'admin' },
      twoFactor: { U0DAVE: true },
    });
    const request = await approvals.submit({
      actor: carol,
      action: 'purge',
      target: 'pushizo/events',
      params: { system: 'pushizo', queue: 'events' },
      preview: 'purge',
    });
    // Carol's 2FA is unknown: when the action executes, her requester check fails.
    expect(await codeOf(approvals.approve(request.id, { ...bob }))).toBe('Forbidden');
    const outcome = await approvals.approve(request.id, {
      id: 'U0DAVE',
      name: 'dave',
      via: 'slack',
      channel: 'C0INC',
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/two-factor authentication for carol/);
    expect(h.executed).toHaveLength(0);
  });
});

describe('two-person approval: the same action asked again', () => {
  // One story in order: each step starts from the requests the one before left.
  let h: Harness;
  let approvals: ReturnType<typeof createApprovals>;
  let first: ActionRequest;
  beforeAll(async () => {
    h = await harness();
    approvals = h.make();
    first = await submitPause(approvals);
  });
  afterAll(async () => {
    await h.close();
  });

  it('is refused while the first waits, naming it', async () => {
    const again = await submitPause(approvals, bob).catch((e: unknown) => e);
    expect((again as OpsError).code).toBe('DuplicateRequest');
    expect((again as OpsError).params).toMatchObject({
      id: first.id,
      action: 'pause',
      target: 'pushizo/dispatch-ios',
    });
  });

  it('is refused with its params in another key order', async () => {
    const reordered = await approvals
      .submit({
        actor: carol,
        action: 'pause',
        target: 'pushizo/dispatch-ios',
        params: { queue: 'dispatch-ios', system: 'pushizo' },
        preview: 'pause',
      })
      .catch((e: unknown) => e);
    expect((reordered as OpsError).code).toBe('DuplicateRequest');
    expect((await approvals.pending()).map((r) => r.id)).toEqual([first.id]);
  });

  it('is taken for another queue or from another channel', async () => {
    const otherQueue = await approvals.submit({
      actor: alice,
      action: 'pause',
      target: 'pushizo/events',
      params: { system: 'pushizo', queue: 'events' },
      preview: 'pause',
    });
    const otherChannel = await submitPause(approvals, { ...alice, channel: 'C0OTHER' });
    expect((await approvals.pending()).map((r) => r.id).sort()).toEqual(
      [first.id, otherQueue.id, otherChannel.id].sort(),
    );
  });

  it('opens a new request once the first is decided', async () => {
    await approvals.deny(first.id, bob, 'not now');
    const later = await submitPause(approvals);
    expect(later.id).not.toBe(first.id);
    expect(later.status).toBe('pending');
  });

  it('when refused, leaves no request and no audit entry of one', async () => {
    const audit = createAudit({ store: h.store, now: () => h.clock.now });
    expect((await audit.recent(50)).filter((e) => e.action === 'request.created')).toHaveLength(4);
  });
});

describe('approval state machine under random interleavings', () => {
  type Op =
    | { kind: 'approve'; who: string; twice: boolean }
    | { kind: 'concurrent'; a: string; b: string }
    | { kind: 'deny'; who: string }
    | { kind: 'expire' }
    | { kind: 'restart' }
    | { kind: 'request'; who: string };
  const users = ['U0ALICE', 'U0BOB', 'U0CAROL', 'U0VIEW'];
  const user = fc.constantFrom(...users);
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('approve' as const), who: user, twice: fc.boolean() }),
    fc.record({ kind: fc.constant('concurrent' as const), a: user, b: user }),
    fc.record({ kind: fc.constant('deny' as const), who: user }),
    fc.constant({ kind: 'expire' as const }),
    fc.constant({ kind: 'restart' as const }),
    fc.record({ kind: fc.constant('request' as const), who: user }),
  );

  it('never executes an action twice and never counts a requester as their own approver', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 }),
        fc.array(op, { minLength: 1, maxLength: 14 }),
        async (needed, ops) => {
          const h = await harness();
          try {
            let approvals = h.make({ approvals: needed });
            const ids: string[] = [];
            const actor = (id: string) => ({ id, name: id, via: 'cli' as const });
            const swallow = (p: Promise<unknown>) =>
              p.catch((e: unknown) => {
                if (!(e instanceof OpsError)) throw e;
              });
            for (const step of ops) {
              const target = ids[ids.length - 1];
              switch (step.kind) {
                case 'request':
                  if (roles[step.who] !== 'viewer') {
                    // The same pause asked while one waits is refused, naming the one that waits.
                    const asked = await submitPause(approvals, actor(step.who)).then(
                      (r) => r.id,
                      (e: unknown) => {
                        if (e instanceof OpsError && e.code === 'DuplicateRequest')
                          return String(e.params.id);
                        throw e;
                      },
                    );
                    ids.push(asked);
                  }
                  break;
                case 'approve':
                  if (target) {
                    const clicks = step.twice
                      ? [
                          approvals.approve(target, actor(step.who)),
                          approvals.approve(target, actor(step.who)),
                        ]
                      : [approvals.approve(target, actor(step.who))];
                    await Promise.all(clicks.map(swallow));
                  }
                  break;
                case 'concurrent':
                  if (target)
                    await Promise.all([
                      swallow(approvals.approve(target, actor(step.a))),
                      swallow(approvals.approve(target, actor(step.b))),
                    ]);
                  break;
                case 'deny':
                  if (target) await swallow(approvals.deny(target, actor(step.who)));
                  break;
                case 'expire':
                  h.clock.now = new Date(h.clock.now.getTime() + 16 * 60_000);
                  await approvals.expireDue();
                  break;
                case 'restart':
                  await h.reopen();
                  approvals = h.make({ approvals: needed });
                  await approvals.recoverInterrupted();
                  break;
              }
            }
            const perRequest = new Map<string, number>();
            for (const e of h.executed) perRequest.set(e.id, (perRequest.get(e.id) ?? 0) + 1);
            for (const count of perRequest.values()) expect(count).toBe(1);
            for (const id of ids) {
              const stored = await h.store.getRequest(id);
              expect(stored).toBeDefined();
              const approvers = stored!.approvals.map((a) => a.userId);
              expect(approvers).not.toContain(stored!.requestedBy);
              expect(new Set(approvers).size).toBe(approvers.length);
              const ran = perRequest.has(id);
              expect(ran).toBe(stored!.status === 'done');
              if (ran) expect(approvers.length).toBeGreaterThanOrEqual(needed);
              for (const a of approvers) expect(roles[a]).not.toBe('viewer');
            }
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
