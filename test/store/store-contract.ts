import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAudit } from '../../src/audit/audit.js';
import type { AuditKeyring } from '../../src/audit/keys.js';
import { type AuditWitness, createWitnessFile } from '../../src/audit/witness.js';
import { type AuditKey, auditEntryHash, auditKeyId, canonicalJson } from '../../src/store/audit-hash.js';
import { migrations } from '../../src/store/migrations.js';
import { auditColumns } from '../../src/store/rows.js';
import type {
  ActionRequest,
  AuditEntry,
  AuditEntryInput,
  PurgeRecord,
  RequestStatus,
  Store,
} from '../../src/store/store.js';
import { describeEscalationStore } from './escalation-contract.js';

/** One database (a SQLite file, a Postgres schema) that several Store instances can open. */
export interface StoreHarness {
  /** A new Store instance on the same database, not yet migrated. */
  open(): Store;
  /** Raw SQL on the same database, bypassing the Store (to tamper with it); `?` placeholders. */
  sql(query: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Holds, on another connection, what applying a migration has to wait for (SQLite's write lock,
   * PostgreSQL's migration lock) until the returned function releases it.
   */
  holdMigrationLock(): Promise<() => Promise<void>>;
  /** Closes the raw connection and removes the database. */
  destroy(): Promise<void>;
}

const t0 = Date.parse('2030-01-01T10:00:00.000Z');
const iso = (offsetSeconds: number) => new Date(t0 + offsetSeconds * 1000).toISOString();

export function sampleRequest(overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    id: `r-${randomUUID().slice(0, 8)}`,
    action: 'pause',
    target: 'pushizo/dispatch-ios',
    params: { reason: 'provider outage', nested: { depth: 2, list: [1, 'two'] } },
    status: 'pending',
    requestedBy: 'U0REQUESTER',
    requestedByName: 'ayse',
    via: 'slack',
    channel: 'C0INCIDENT',
    messageTs: '1714557723.000100',
    requiredApprovals: 1,
    approvals: [],
    preview: 'pause pushizo/dispatch-ios: 48,211 waiting jobs stop being picked up',
    createdAt: iso(0),
    expiresAt: iso(15 * 60),
    updatedAt: iso(0),
    ...overrides,
  };
}

function entry(i: number, overrides: Partial<AuditEntryInput> = {}): AuditEntryInput {
  return {
    at: iso(i),
    actorId: `U0ACTOR${i % 3}`,
    actorName: `actor ${i % 3}`,
    via: i % 2 ? 'cli' : 'slack',
    channel: 'C0INCIDENT',
    action: `command.status`,
    target: `pushizo/q${i}`,
    params: { n: i, zeta: 'z', alpha: { b: 1, a: [2, 1] } },
    outcome: 'ok',
    ...overrides,
  };
}

const auditContentColumns = auditColumns.filter((c) => c !== 'seq');

const keyOf = (text: string): AuditKey => {
  const secret = Buffer.from(text.padEnd(40, '.'));
  return { id: auditKeyId(secret), secret };
};
const ringOf = (current: AuditKey | undefined, ...older: AuditKey[]): AuditKeyring => ({
  ...(current ? { current } : {}),
  known: new Map([...older, ...(current ? [current] : [])].map((k) => [k.id, k.secret])),
});

/**
 * The behaviour every store must have, run against a fresh database per test. Both the SQLite and
 * the PostgreSQL store run it: `describeStore('sqlite', makeSqliteHarness)`.
 */
export function describeStore(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(name, () => {
    let harness: StoreHarness;
    let store: Store;
    const opened: Store[] = [];
    const open = async () => {
      const s = harness.open();
      opened.push(s);
      await s.migrate();
      return s;
    };
    const auditOf = (
      s: Store,
      pageSize?: number,
      extra: { keys?: AuditKeyring; witnesses?: AuditWitness[] } = {},
    ) => createAudit({ store: s, now: () => new Date(t0), ...(pageSize ? { pageSize } : {}), ...extra });
    /**
     * What a database writer without the key can do: change entry `editSeq`'s outcome and recompute
     * every hash from `fromSeq` on with plain sha256 (no key id), chain head included.
     */
    const rewriteWithoutKey = async (fromSeq: number, editSeq: number) => {
      const all = await store.listAudit();
      let prevHash = fromSeq > 1 ? all[fromSeq - 2]!.hash : '';
      for (const original of all.filter((e) => e.seq >= fromSeq)) {
        const { hash: _hash, keyId: _keyId, ...rest } = original;
        const unhashed: Omit<AuditEntry, 'hash'> = {
          ...rest,
          prevHash,
          ...(original.seq === editSeq ? { outcome: 'denied' } : {}),
        };
        const hash = auditEntryHash(unhashed);
        await harness.sql(
          'UPDATE audit_log SET outcome = ?, prev_hash = ?, hash = ?, key_id = NULL WHERE seq = ?',
          [unhashed.outcome, prevHash, hash, original.seq],
        );
        prevHash = hash;
      }
      await harness.sql('UPDATE audit_head SET hash = ? WHERE id = 1', [prevHash]);
    };
    /** Deletes the last `n` rows and rewinds the head to the entry before them, as a writer would. */
    const trimEnd = async (n: number) => {
      const all = await store.listAudit();
      const keep = all[all.length - n - 1]!;
      await harness.sql('DELETE FROM audit_log WHERE seq > ?', [keep.seq]);
      await harness.sql('UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1', [keep.seq, keep.hash]);
    };
    let witnessDir: string | undefined;
    const witnessFile = () => {
      witnessDir ??= mkdtempSync(join(tmpdir(), 'queue-ops-witness-'));
      return createWitnessFile(join(witnessDir, 'audit-witness.jsonl'));
    };
    const appendMany = async (s: Store, count: number) => {
      for (let i = 1; i <= count; i++) await s.appendAudit(entry(i));
    };

    beforeEach(async () => {
      harness = await makeHarness();
      store = await open();
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await harness.destroy();
      if (witnessDir) rmSync(witnessDir, { recursive: true, force: true });
      witnessDir = undefined;
    });

    describe('migrations', () => {
      it('running migrate again, from the same and from another instance, applies each version once and keeps data', async () => {
        const request = sampleRequest();
        await store.createRequest(request);
        await store.migrate();
        await (await open()).migrate();
        const rows = await harness.sql('SELECT version FROM schema_migrations ORDER BY version');
        expect(rows.map((r) => Number(r.version))).toEqual(migrations.map((m) => m.version));
        expect(await store.getRequest(request.id)).toEqual(request);
      });

      it('migrate on a current schema only reads: it answers while another connection holds the migration lock', async () => {
        const release = await harness.holdMigrationLock();
        let other: Store;
        try {
          // Before: a write transaction per migration (SQLite waited for the lock, then failed)
          // or the advisory lock (PostgreSQL waited for ever) on every command line run.
          other = await open();
        } finally {
          await release();
        }
        await other.createRequest(sampleRequest({ id: 'r-after-lock' }));
        expect((await store.getRequest('r-after-lock'))?.id).toBe('r-after-lock');
      }, 15_000);

      it('several instances migrating a fresh database at the same moment all succeed, applying each version once', async () => {
        const fresh = await makeHarness();
        const stores = [fresh.open(), fresh.open(), fresh.open(), fresh.open()];
        try {
          await Promise.all(stores.map((s) => s.migrate()));
          const rows = await fresh.sql('SELECT version FROM schema_migrations ORDER BY version');
          expect(rows.map((r) => Number(r.version))).toEqual(migrations.map((m) => m.version));
          const entry1 = await stores[1]!.appendAudit(entry(1));
          expect(entry1.seq).toBe(1);
        } finally {
          for (const s of stores) await s.close();
          await fresh.destroy();
        }
      });
    });

    describe('approval requests', () => {
      it('a request reads back exactly as it was created, JSON parameters included', async () => {
        const request = sampleRequest();
        await store.createRequest(request);
        expect(await store.getRequest(request.id)).toEqual(request);
        expect(await store.getRequest('r-nothere')).toBeUndefined();
      });

      it('a request without optional fields reads back without them', async () => {
        const request = sampleRequest({
          channel: undefined,
          messageTs: undefined,
          requestedByName: undefined,
        });
        delete request.channel;
        delete request.messageTs;
        delete request.requestedByName;
        await store.createRequest(request);
        const read = await store.getRequest(request.id);
        expect(read).toEqual(request);
        expect(read && 'channel' in read).toBe(false);
      });

      it('listRequests filters by status and lists oldest first', async () => {
        // Two pending requests must differ in something to both wait (see "pending twin" below).
        const a = sampleRequest({ createdAt: iso(1), target: 'pushizo/dispatch-android' });
        const b = sampleRequest({ createdAt: iso(2), status: 'executing' });
        const c = sampleRequest({ createdAt: iso(0) });
        for (const r of [a, b, c]) await store.createRequest(r);
        expect((await store.listRequests({ statuses: ['pending'] })).map((r) => r.id)).toEqual([c.id, a.id]);
        expect(
          (await store.listRequests({ statuses: ['executing', 'interrupted'] })).map((r) => r.id),
        ).toEqual([b.id]);
        expect((await store.listRequests()).map((r) => r.id)).toEqual([c.id, a.id, b.id]);
        expect(await store.listRequests({ statuses: [] })).toEqual([]);
      });

      it('a pending twin (same action, target, channel and params in another key order) is not stored: the waiting one is returned', async () => {
        const first = sampleRequest({ params: { reason: 'outage', nested: { a: 1, b: [1, 'two'] } } });
        expect(await store.createRequest(first)).toEqual({ created: true });
        const twin = sampleRequest({
          params: { nested: { b: [1, 'two'], a: 1 }, reason: 'outage' },
          requestedBy: 'U0SOMEONEELSE',
        });
        expect(await store.createRequest(twin)).toEqual({ created: false, pending: first });
        expect(await store.getRequest(twin.id)).toBeUndefined();
        // Anything that differs is another request: channel, none (the command line), target,
        // action, params; and one that is not pending (an action needing no approval).
        const others = [
          sampleRequest({ params: first.params, channel: 'C0OTHER' }),
          sampleRequest({ params: first.params, channel: undefined }),
          sampleRequest({ params: first.params, target: 'pushizo/events' }),
          sampleRequest({ params: first.params, action: 'resume' }),
          sampleRequest({ params: { ...first.params, reason: 'another' } }),
          sampleRequest({ params: first.params, status: 'approved' }),
          sampleRequest({ params: first.params, status: 'approved' }),
        ];
        for (const other of others) expect(await store.createRequest(other)).toEqual({ created: true });
        // Once the first is decided, the same request may wait again.
        await store.transitionRequest(first.id, ['pending'], { status: 'denied' });
        expect(await store.createRequest(twin)).toEqual({ created: true });
        expect((await store.getRequest(twin.id))?.status).toBe('pending');
      });

      it('twenty simultaneous creates of one request from two instances store exactly one', async () => {
        const other = await open();
        const tries = Array.from({ length: 20 }, (_, i) => sampleRequest({ requestedBy: `U0ASKER${i}` }));
        const outcomes = await Promise.all(tries.map((r, i) => (i % 2 ? other : store).createRequest(r)));
        const created = tries.filter((_, i) => outcomes[i]!.created);
        expect(created).toHaveLength(1);
        for (const outcome of outcomes) {
          if (!outcome.created) expect(outcome.pending).toEqual(created[0]);
        }
        expect(await store.listRequests({ statuses: ['pending'] })).toEqual(created);
      });

      describe('migrating a store made before the pending check, with two waiting twins', () => {
        /** Two pending requests, made identical in the store taken back to version 6, then migrated. */
        const upgradedWithTwins = async () => {
          const older = sampleRequest({ createdAt: iso(1), params: { reason: 'x', n: 1 } });
          const newer = sampleRequest({ createdAt: iso(2), params: { reason: 'y', n: 1 } });
          for (const r of [older, newer]) await store.createRequest(r);
          // Back to version 6, with the two made identical as the old code could leave them.
          await harness.sql('DROP INDEX approval_requests_pending_key');
          await harness.sql('ALTER TABLE approval_requests DROP COLUMN pending_key');
          await harness.sql('DROP TABLE rate_events');
          await harness.sql('DROP TABLE escalation_silences');
          await harness.sql('DROP INDEX escalation_alerts_group');
          await harness.sql('ALTER TABLE escalation_alerts DROP COLUMN group_id');
          await harness.sql('ALTER TABLE escalation_alerts DROP COLUMN cause_id');
          await harness.sql('DROP TABLE queue_limits');
          await harness.sql('DELETE FROM schema_migrations WHERE version >= 7');
          await harness.sql('UPDATE approval_requests SET params = ? WHERE id = ?', [
            JSON.stringify({ n: 1, reason: 'x' }),
            newer.id,
          ]);
          return { upgraded: await open(), older, newer };
        };

        it('gives the oldest of the twins the key', async () => {
          const { upgraded, older } = await upgradedWithTwins();
          const again = sampleRequest({ createdAt: iso(3), params: { reason: 'x', n: 1 } });
          expect(await upgraded.createRequest(again)).toMatchObject({
            created: false,
            pending: { id: older.id },
          });
        });

        it('leaves the other twin decidable', async () => {
          const { upgraded, newer } = await upgradedWithTwins();
          expect(
            (await upgraded.transitionRequest(newer.id, ['pending'], { status: 'denied' }))?.status,
          ).toBe('denied');
        });

        it('brings back the rate window the old version had no table for', async () => {
          const { upgraded } = await upgradedWithTwins();
          expect(await upgraded.takeRate('user:U0A', iso(0), iso(-60), 1)).toEqual({ taken: true });
        });
      });

      it('a transition applies its patch only while the status is one of `from`, so a replay is a no-op', async () => {
        const request = sampleRequest();
        await store.createRequest(request);
        const approved = await store.transitionRequest(request.id, ['pending'], {
          status: 'approved',
          updatedAt: iso(10),
        });
        expect(approved).toEqual({ ...request, status: 'approved', updatedAt: iso(10) });

        const replay = await store.transitionRequest(request.id, ['pending'], {
          status: 'denied',
          deniedBy: 'U0X',
        });
        expect(replay).toBeUndefined();
        expect(await store.getRequest(request.id)).toEqual(approved);

        const done = await store.transitionRequest(request.id, ['approved', 'executing'], {
          status: 'done',
          result: { workersAnswered: ['celery@a', 'celery@b'], paused: true },
          startedAt: iso(11),
          finishedAt: iso(12),
        });
        expect(done?.result).toEqual({ workersAnswered: ['celery@a', 'celery@b'], paused: true });
        expect(await store.getRequest(request.id)).toEqual(done);
        expect(
          await store.transitionRequest('r-missing', ['pending'], { status: 'approved' }),
        ).toBeUndefined();
      });

      it('a transition with a check only applies when the check holds on the stored row', async () => {
        const request = sampleRequest({ expiresAt: iso(60), requiredApprovals: 1 });
        await store.createRequest(request);
        expect(
          await store.transitionRequest(
            request.id,
            ['pending'],
            { status: 'approved' },
            { approvalsComplete: true },
          ),
        ).toBeUndefined();
        expect(
          await store.transitionRequest(
            request.id,
            ['pending'],
            { status: 'expired' },
            { expiredAt: iso(59) },
          ),
        ).toBeUndefined();
        await store.addApproval(request.id, { userId: 'U0OTHER', at: iso(5) });
        expect(
          await store.transitionRequest(
            request.id,
            ['pending'],
            { status: 'approved' },
            { notExpiredAt: iso(60) },
          ),
        ).toBeUndefined();
        const approved = await store.transitionRequest(
          request.id,
          ['pending'],
          { status: 'approved' },
          { approvalsComplete: true, notExpiredAt: iso(59) },
        );
        expect(approved?.status).toBe('approved');
      });

      it('twenty simultaneous pending → executing transitions from two instances produce exactly one winner', async () => {
        const request = sampleRequest({ status: 'approved' });
        await store.createRequest(request);
        await store.transitionRequest(request.id, ['approved'], { status: 'pending' });
        const other = await open();
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? other : store).transitionRequest(request.id, ['pending'], {
              status: 'executing',
              startedAt: iso(i),
              error: `winner ${i}`,
            }),
          ),
        );
        const winners = results.filter((r): r is ActionRequest => r !== undefined);
        expect(winners).toHaveLength(1);
        const stored = await store.getRequest(request.id);
        expect(stored?.status).toBe('executing');
        expect(stored?.error).toBe(winners[0]!.error);
      });

      it('a transition with its audit entry writes both in one transaction, or neither when its condition fails, and the chain verifies', async () => {
        const request = sampleRequest({ status: 'approved' });
        await store.createRequest(request);
        await appendMany(store, 2);
        const started = await store.transitionRequestAudited(
          request.id,
          ['approved'],
          { status: 'executing', startedAt: iso(3), updatedAt: iso(3) },
          undefined,
          { entry: entry(3, { action: 'request.executing', params: { request: request.id } }) },
        );
        expect(started?.request.status).toBe('executing');
        expect(started?.entry).toMatchObject({ seq: 3, action: 'request.executing' });
        // A replay: the condition no longer holds, so neither is written.
        const replay = await store.transitionRequestAudited(
          request.id,
          ['approved'],
          { status: 'executing', updatedAt: iso(4) },
          undefined,
          { entry: entry(4, { action: 'request.executing' }) },
        );
        expect(replay).toBeUndefined();
        expect((await store.listAudit()).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(await store.auditHead?.()).toMatchObject({ seq: 3, hash: started!.entry.hash });
        expect(await auditOf(store).verify()).toEqual({ ok: true, count: 3 });
      });

      it('an approval with its audit entry is written whole; the last one needed approves it in the same write; a refusal writes neither', async () => {
        const request = sampleRequest();
        await store.createRequest(request);
        const refused = await store.addApprovalAudited(
          request.id,
          { userId: request.requestedBy, at: iso(1) },
          { approveIfCompleteAt: iso(1) },
          { entry: entry(1, { action: 'request.approved' }) },
        );
        expect(refused).toMatchObject({ ok: false, reason: 'self' });
        expect(await store.listAudit()).toEqual([]);
        const approved = await store.addApprovalAudited(
          request.id,
          { userId: 'U0BOB', at: iso(2) },
          { approveIfCompleteAt: iso(2) },
          { entry: entry(2, { action: 'request.approved' }) },
        );
        expect(approved.ok).toBe(true);
        if (!approved.ok) return;
        expect(approved.request).toMatchObject({ status: 'approved', updatedAt: iso(2) });
        expect(approved.request.approvals.map((a) => a.userId)).toEqual(['U0BOB']);
        expect(approved.entry).toMatchObject({ seq: 1, action: 'request.approved' });
        expect((await store.getRequest(request.id))?.status).toBe('approved');
        expect(await auditOf(store).verify()).toEqual({ ok: true, count: 1 });
        // Past its ttl the approval is stored, the request stays pending (the sweep expires it).
        const late = sampleRequest({ requiredApprovals: 1, target: 'pushizo/late' });
        await store.createRequest(late);
        const after = await store.addApprovalAudited(
          late.id,
          { userId: 'U0BOB', at: iso(16 * 60) },
          { approveIfCompleteAt: iso(16 * 60) },
          { entry: entry(3, { action: 'request.approved' }) },
        );
        expect(after.ok && after.request.status).toBe('pending');
      });

      it('addApproval refuses the requester, a second approval by the same person, and requests no longer pending', async () => {
        const request = sampleRequest({ requiredApprovals: 2 });
        await store.createRequest(request);

        const self = await store.addApproval(request.id, { userId: request.requestedBy, at: iso(1) });
        expect(self).toMatchObject({ ok: false, reason: 'self' });

        const first = await store.addApproval(request.id, { userId: 'U0BOB', userName: 'bob', at: iso(2) });
        expect(first).toEqual({
          ok: true,
          request: {
            ...request,
            approvals: [{ userId: 'U0BOB', userName: 'bob', at: iso(2) }],
            updatedAt: iso(2),
          },
        });

        const again = await store.addApproval(request.id, { userId: 'U0BOB', at: iso(3) });
        expect(again).toMatchObject({ ok: false, reason: 'duplicate' });

        await store.transitionRequest(request.id, ['pending'], { status: 'denied' });
        const late = await store.addApproval(request.id, { userId: 'U0CAROL', at: iso(4) });
        expect(late).toMatchObject({ ok: false, reason: 'not-pending', request: { status: 'denied' } });
        expect((await store.getRequest(request.id))?.approvals.map((a) => a.userId)).toEqual(['U0BOB']);

        expect(await store.addApproval('r-missing', { userId: 'U0BOB', at: iso(5) })).toEqual({
          ok: false,
          reason: 'missing',
        });
      });

      it('simultaneous approvals by different people all count, and by the same person count once', async () => {
        const request = sampleRequest({ requiredApprovals: 5 });
        await store.createRequest(request);
        const other = await open();
        const users = Array.from({ length: 8 }, (_, i) => `U0APPROVER${i}`);
        const distinct = await Promise.all(
          users.map((userId, i) => (i % 2 ? other : store).addApproval(request.id, { userId, at: iso(i) })),
        );
        expect(distinct.every((r) => r.ok)).toBe(true);
        const same = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? other : store).addApproval(request.id, { userId: 'U0DAN', at: iso(9) }),
          ),
        );
        expect(same.filter((r) => r.ok)).toHaveLength(1);
        expect(same.filter((r) => !r.ok && r.reason === 'duplicate')).toHaveLength(7);
        const stored = await store.getRequest(request.id);
        expect(stored?.approvals.map((a) => a.userId).sort()).toEqual([...users, 'U0DAN'].sort());
      });

      it('the OS user and host of a command-line request, and an execution lease, read back as written', async () => {
        const request = sampleRequest({
          via: 'cli',
          requestedByOsUser: 'ayse',
          requestedOnHost: 'ops-bastion-1',
          status: 'executing',
          startedAt: iso(1),
          leaseUntil: iso(31),
          leaseOwner: 'replica-a',
          approvals: [{ userId: 'U0BOB', at: iso(1), via: 'cli', osUser: 'bob', host: 'ops-bastion-1' }],
        });
        await store.createRequest(request);
        expect(await store.getRequest(request.id)).toEqual(request);
      });

      it('only the replica holding the lease renews it, and only an execution whose lease ran out can be taken for dead', async () => {
        const request = sampleRequest({
          status: 'executing',
          startedAt: iso(0),
          leaseUntil: iso(30),
          leaseOwner: 'replica-a',
        });
        await store.createRequest(request);
        const other = await open();
        expect(
          await other.transitionRequest(
            request.id,
            ['executing'],
            { leaseUntil: iso(90) },
            { leaseOwner: 'replica-b' },
          ),
        ).toBeUndefined();
        const renewed = await other.transitionRequest(
          request.id,
          ['executing'],
          { leaseUntil: iso(60) },
          { leaseOwner: 'replica-a' },
        );
        expect(renewed?.leaseUntil).toBe(iso(60));
        // At 45 s the renewed lease still holds; the one it replaced would have run out.
        expect(
          await store.transitionRequest(
            request.id,
            ['executing'],
            { status: 'interrupted' },
            { leaseExpiredAt: iso(45) },
          ),
        ).toBeUndefined();
        const dead = await store.transitionRequest(
          request.id,
          ['executing'],
          { status: 'interrupted' },
          { leaseExpiredAt: iso(60) },
        );
        expect(dead?.status).toBe('interrupted');
        // A renewal racing the sweep finds the status moved on: the lease is not revived.
        expect(
          await other.transitionRequest(
            request.id,
            ['executing'],
            { leaseUntil: iso(90) },
            { leaseOwner: 'replica-a' },
          ),
        ).toBeUndefined();

        // An execution from before leases existed is judged by when it started.
        const legacy = sampleRequest({ status: 'executing', startedAt: iso(100) });
        await store.createRequest(legacy);
        expect(
          await store.transitionRequest(
            legacy.id,
            ['executing'],
            { status: 'interrupted' },
            { leaseExpiredAt: iso(99) },
          ),
        ).toBeUndefined();
        expect(
          (
            await store.transitionRequest(
              legacy.id,
              ['executing'],
              { status: 'interrupted' },
              { leaseExpiredAt: iso(100) },
            )
          )?.status,
        ).toBe('interrupted');
      });

      it('addApproval with distinctOsUser refuses the OS user and host that made the request or gave an earlier approval', async () => {
        const request = sampleRequest({
          requiredApprovals: 3,
          via: 'cli',
          requestedByOsUser: 'ayse',
          requestedOnHost: 'bastion',
        });
        await store.createRequest(request);
        const check = { distinctOsUser: true };
        const asRequester = await store.addApproval(
          request.id,
          { userId: 'U0BOB', at: iso(1), via: 'cli', osUser: 'ayse', host: 'bastion' },
          check,
        );
        expect(asRequester).toMatchObject({ ok: false, reason: 'same-os-user' });
        // The same account name on another machine is another person's terminal.
        const elsewhere = await store.addApproval(
          request.id,
          { userId: 'U0BOB', at: iso(2), via: 'cli', osUser: 'ayse', host: 'laptop' },
          check,
        );
        expect(elsewhere.ok).toBe(true);
        const sameAsApprover = await store.addApproval(
          request.id,
          { userId: 'U0CAROL', at: iso(3), via: 'cli', osUser: 'ayse', host: 'laptop' },
          check,
        );
        expect(sameAsApprover).toMatchObject({ ok: false, reason: 'same-os-user' });
        // Without the check (cliSameOsUser: allow) only the Slack ids count.
        const allowed = await store.addApproval(request.id, {
          userId: 'U0CAROL',
          at: iso(4),
          via: 'cli',
          osUser: 'ayse',
          host: 'bastion',
        });
        expect(allowed.ok).toBe(true);
        expect((await store.getRequest(request.id))?.approvals.map((a) => a.userId)).toEqual([
          'U0BOB',
          'U0CAROL',
        ]);
      });

      it('simultaneous command-line approvals by one OS user under different ids count once', async () => {
        const request = sampleRequest({ requiredApprovals: 5 });
        await store.createRequest(request);
        const other = await open();
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? other : store).addApproval(
              request.id,
              { userId: `U0CLAIM${i}`, at: iso(i), via: 'cli', osUser: 'mallory', host: 'bastion' },
              { distinctOsUser: true },
            ),
          ),
        );
        expect(results.filter((r) => r.ok)).toHaveLength(1);
        expect(results.filter((r) => !r.ok && r.reason === 'same-os-user')).toHaveLength(7);
      });

      it('a pending request, and one caught executing, are still there after the store is closed and reopened', async () => {
        const pending = sampleRequest();
        const executing = sampleRequest({ status: 'executing', startedAt: iso(3) });
        await store.createRequest(pending);
        await store.createRequest(executing);
        await store.close();
        const reopened = await open();
        expect(await reopened.listRequests({ statuses: ['pending'] })).toEqual([pending]);
        const interrupted = await reopened.transitionRequest(executing.id, ['executing'], {
          status: 'interrupted' satisfies RequestStatus,
        });
        expect(interrupted?.status).toBe('interrupted');
      });
    });

    describe('purges', () => {
      const purge = (overrides: Partial<PurgeRecord> = {}): PurgeRecord => ({
        id: `r-${randomUUID().slice(0, 8)}`,
        system: 'pushizo',
        queue: 'events',
        backend: 'bullmq',
        states: ['waiting', 'delayed'],
        state: 'archiving',
        archivePath: '/var/lib/queue-ops/archive/r-1',
        total: 1000,
        chunks: 0,
        archived: 0,
        purged: 0,
        owner: 'host:1',
        heartbeatAt: iso(0),
        createdAt: iso(0),
        updatedAt: iso(0),
        ...overrides,
      });

      it('keeps a purge and its chunks, and moves it only from the state (and owner) the caller names', async () => {
        const p = purge();
        await store.createPurge(p);
        expect(await store.getPurge(p.id)).toEqual(p);
        await store.addPurgeChunk({
          purgeId: p.id,
          seq: 1,
          file: 'chunk-000001.jsonl.gz',
          sha256: 'ab',
          bytes: 10,
          records: 3,
          deleted: false,
          purged: 0,
          skipped: [],
        });
        await store.markPurgeChunk(p.id, 1, { purged: 2, skipped: ['7'] });
        expect(await store.listPurgeChunks(p.id)).toEqual([
          expect.objectContaining({ seq: 1, records: 3, deleted: true, purged: 2, skipped: ['7'] }),
        ]);
        expect(await store.updatePurge(p.id, ['archiving'], { owner: 'host:2' }, 'host:9')).toBeUndefined();
        const taken = await store.updatePurge(p.id, ['archiving'], { owner: 'host:2', chunks: 1 }, 'host:1');
        expect(taken).toMatchObject({ owner: 'host:2', chunks: 1, state: 'archiving' });
        expect(await store.updatePurge(p.id, ['done'], { state: 'undone' })).toBeUndefined();
        const done = await store.updatePurge(p.id, ['archiving'], {
          state: 'done',
          finishedAt: iso(5),
          purged: 2,
        });
        expect(done).toMatchObject({ state: 'done', purged: 2, finishedAt: iso(5) });
        expect((await store.listPurges({ states: ['archiving'] })).map((x) => x.id)).not.toContain(p.id);
        expect((await store.listPurges({ states: ['done'] })).map((x) => x.id)).toContain(p.id);
      });

      it('a periodic job is claimed once per period, by one of several stores', async () => {
        const other = await open();
        const claims = await Promise.all([
          store.claimPeriodic('archive-retention', iso(100), iso(0)),
          other.claimPeriodic('archive-retention', iso(100), iso(0)),
        ]);
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(await store.claimPeriodic('archive-retention', iso(200), iso(50))).toBe(false);
        expect(await store.claimPeriodic('archive-retention', iso(90_000), iso(100))).toBe(true);
      });
    });

    describe('audit chain', () => {
      it('appends number entries 1, 2, 3… and chain each to the previous hash', async () => {
        const first = await store.appendAudit(entry(1));
        const second = await store.appendAudit(entry(2, { error: 'boom', outcome: 'failed' }));
        expect(first).toMatchObject({ seq: 1, prevHash: '' });
        expect(second).toMatchObject({ seq: 2, prevHash: first.hash, error: 'boom' });
        const { hash, ...unhashed } = second;
        expect(hash).toBe(
          createHash('sha256')
            .update(first.hash + canonicalJson(unhashed))
            .digest('hex'),
        );
        expect(await store.listAudit()).toEqual([first, second]);
      });

      it('listAudit pages by seq, filters by time and can list newest first', async () => {
        await appendMany(store, 6);
        const seqs = async (o: Parameters<Store['listAudit']>[0]) =>
          (await store.listAudit(o)).map((e) => e.seq);
        expect(await seqs({ afterSeq: 2, limit: 3 })).toEqual([3, 4, 5]);
        expect(await seqs({ sinceAt: iso(4) })).toEqual([4, 5, 6]);
        expect(await seqs({ newestFirst: true, limit: 2 })).toEqual([6, 5]);
      });

      it('an untouched chain verifies, across page boundaries', async () => {
        await appendMany(store, 7);
        expect(await auditOf(store, 3).verify()).toEqual({ ok: true, count: 7 });
        expect(await auditOf(store).verify()).toEqual({ ok: true, count: 7 });
      });

      it('an empty chain verifies with a count of zero', async () => {
        expect(await auditOf(store).verify()).toEqual({ ok: true, count: 0 });
      });

      it('an entry whose outcome was edited in the database is named by its seq', async () => {
        await appendMany(store, 6);
        await harness.sql('UPDATE audit_log SET outcome = ? WHERE seq = ?', ['denied', 4]);
        const result = await auditOf(store, 2).verify();
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect(result.firstBad.seq).toBe(4);
        expect(result.firstBad.reason).toMatch(/edited/);
        expect(result.count).toBe(3);
      });

      it('an entry removed from the middle is detected at the entry after the gap', async () => {
        await appendMany(store, 6);
        await harness.sql('DELETE FROM audit_log WHERE seq = ?', [3]);
        const result = await auditOf(store, 2).verify();
        expect(result).toMatchObject({ ok: false, firstBad: { seq: 4 } });
        if (!result.ok) expect(result.firstBad.reason).toMatch(/#3 is missing/);
      });

      it('entries removed from the end are detected through the chain head', async () => {
        await appendMany(store, 6);
        await harness.sql('DELETE FROM audit_log WHERE seq >= ?', [5]);
        const result = await auditOf(store).verify();
        expect(result).toMatchObject({ ok: false, firstBad: { seq: 5 } });
        if (!result.ok) expect(result.firstBad.reason).toMatch(/#5–#6.*missing/);
      });

      it('swapping the contents of two entries is detected at the first of them', async () => {
        await appendMany(store, 6);
        const rows = await harness.sql('SELECT * FROM audit_log WHERE seq IN (?, ?) ORDER BY seq', [2, 3]);
        const [two, three] = rows as [Record<string, unknown>, Record<string, unknown>];
        const assign = auditContentColumns.map((c) => `${c} = ?`).join(', ');
        await harness.sql(`UPDATE audit_log SET ${assign} WHERE seq = ?`, [
          ...auditContentColumns.map((c) => three[c]),
          2,
        ]);
        await harness.sql(`UPDATE audit_log SET ${assign} WHERE seq = ?`, [
          ...auditContentColumns.map((c) => two[c]),
          3,
        ]);
        const result = await auditOf(store).verify();
        expect(result).toMatchObject({ ok: false, count: 1, firstBad: { seq: 2 } });
      });

      it('concurrent appends from two instances keep one unbroken chain', async () => {
        const other = await open();
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? other : store).appendAudit(entry(i + 1))),
        );
        const all = await store.listAudit();
        expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        expect(await auditOf(other).verify()).toEqual({ ok: true, count: 40 });
      });

      it('a keyed chain verifies with its keys after a rotation, and names the first entry whose key is not configured', async () => {
        const [oldKey, newKey] = [keyOf('old key'), keyOf('new key')];
        for (let i = 1; i <= 3; i++) await store.appendAudit(entry(i), oldKey);
        for (let i = 4; i <= 6; i++) await store.appendAudit(entry(i), newKey);
        const stored = await store.listAudit();
        expect(stored.map((e) => e.keyId)).toEqual([
          oldKey.id,
          oldKey.id,
          oldKey.id,
          newKey.id,
          newKey.id,
          newKey.id,
        ]);
        // The hash is an HMAC under the key, not sha256: recomputing without the key gives another value.
        const { hash, ...unhashed } = stored[3]!;
        expect(auditEntryHash(unhashed)).not.toBe(hash);
        expect(auditEntryHash(unhashed, newKey.secret)).toBe(hash);

        const report = await auditOf(store, 2, { keys: ringOf(newKey, oldKey) }).verifyReport();
        expect(report).toMatchObject({ result: { ok: true, count: 6 }, keyId: newKey.id });
        const withoutOld = await auditOf(store, 2, { keys: ringOf(newKey) }).verify();
        expect(withoutOld).toMatchObject({ ok: false, count: 0, firstBad: { seq: 1 } });
        if (!withoutOld.ok) expect(withoutOld.firstBad.reason).toContain(`audit key ${oldKey.id}`);
        const keyless = await auditOf(store, 2).verify();
        expect(keyless).toMatchObject({ ok: false, firstBad: { seq: 1 } });
        if (!keyless.ok) expect(keyless.firstBad.reason).toMatch(/no audit key is configured/);
      });

      it('unkeyed entries from before the key still verify once a keyed entry follows them', async () => {
        const key = keyOf('the key');
        await appendMany(store, 3);
        for (let i = 4; i <= 5; i++) await store.appendAudit(entry(i), key);
        expect(await auditOf(store, 2, { keys: ringOf(key) }).verify()).toEqual({ ok: true, count: 5 });
      });

      it('recomputing every hash without the key after an edit fails verify, from the edit or from the start', async () => {
        const key = keyOf('the key');
        for (let i = 1; i <= 6; i++) await store.appendAudit(entry(i), key);
        const keys = ringOf(key);
        await rewriteWithoutKey(4, 4);
        const fromEdit = await auditOf(store, 2, { keys }).verify();
        expect(fromEdit).toMatchObject({ ok: false, count: 3, firstBad: { seq: 4 } });
        if (!fromEdit.ok) expect(fromEdit.firstBad.reason).toMatch(/not keyed/);

        await rewriteWithoutKey(1, 4);
        // The whole chain now passes as plain sha256: only the key tells it should not be.
        expect(await auditOf(store, 2).verify()).toEqual({ ok: true, count: 6 });
        const whole = await auditOf(store, 2, { keys }).verify();
        expect(whole).toMatchObject({ ok: false, firstBad: { seq: 1 } });
        if (!whole.ok) expect(whole.firstBad.reason).toMatch(/#1–#6 are not keyed/);
      });

      it('a witness file gets one line per entry and catches the last two rows deleted with the head rewound', async () => {
        const key = keyOf('the key');
        const witness = witnessFile();
        const audit = auditOf(store, 2, { keys: ringOf(key), witnesses: [witness] });
        for (let i = 1; i <= 6; i++) await audit.record(entry(i));
        const newest = (await store.listAudit({ newestFirst: true, limit: 1 }))[0]!;
        expect(await witness.newestHead()).toEqual({
          seq: 6,
          hash: newest.hash,
          at: newest.at,
          keyId: key.id,
        });
        expect(await audit.verifyReport()).toMatchObject({
          result: { ok: true, count: 6 },
          witnesses: [{ kind: 'file', status: 'checked', seq: 6 }],
        });

        await trimEnd(2);
        // Without the witness the shortened chain is consistent: the key cannot tell.
        expect(await auditOf(store, 2, { keys: ringOf(key) }).verify()).toEqual({ ok: true, count: 4 });
        const report = await audit.verifyReport();
        expect(report.result).toMatchObject({ ok: false, count: 4, firstBad: { seq: 5 } });
        if (!report.result.ok) {
          expect(report.result.firstBad.reason).toMatch(/#5–#6 are missing/);
          expect(report.result.firstBad.reason).toContain('audit-witness.jsonl');
        }
      });

      it('a witness file catches an unkeyed chain recomputed after an edit, at the entry it recorded', async () => {
        const witness = witnessFile();
        const audit = auditOf(store, 2, { witnesses: [witness] });
        for (let i = 1; i <= 6; i++) await audit.record(entry(i));
        await rewriteWithoutKey(3, 3);
        expect(await auditOf(store, 2).verify()).toEqual({ ok: true, count: 6 });
        const result = await audit.verify();
        expect(result).toMatchObject({ ok: false, count: 5, firstBad: { seq: 6 } });
        if (!result.ok) expect(result.firstBad.reason).toMatch(/differs from the one the witness file/);
      });

      it('export --since writes one JSON line per entry at or after that time, in seq order', async () => {
        await appendMany(store, 5);
        const lines: string[] = [];
        const written = await auditOf(store, 2).export({ since: iso(3) }, (line) => lines.push(line));
        expect(written).toBe(3);
        const parsed = lines.map((l) => JSON.parse(l));
        expect(parsed.map((e) => e.seq)).toEqual([3, 4, 5]);
        expect(parsed).toEqual(
          (await store.listAudit({ afterSeq: 2 })).map((e) => JSON.parse(JSON.stringify(e))),
        );
        expect(lines.every((l) => !l.includes('\n'))).toBe(true);
      });
    });

    describe('audit visibility', () => {
      it('visibleIn keeps entries asked in that channel or not through Slack, still newest first and limited', async () => {
        await store.appendAudit(entry(1, { via: 'slack', channel: 'C0PRIVATE' }));
        await store.appendAudit(entry(2, { via: 'cli', channel: undefined }));
        await store.appendAudit(entry(3, { via: 'slack', channel: 'C0INCIDENT' }));
        await store.appendAudit(entry(4, { via: 'slack', channel: 'C0PRIVATE' }));
        await store.appendAudit(entry(5, { via: 'console', channel: undefined }));
        const seqs = async (o: Parameters<Store['listAudit']>[0]) =>
          (await store.listAudit(o)).map((e) => e.seq);
        expect(await seqs({ visibleIn: 'C0INCIDENT', newestFirst: true })).toEqual([5, 3, 2]);
        expect(await seqs({ visibleIn: 'C0INCIDENT', newestFirst: true, limit: 2 })).toEqual([5, 3]);
        expect(await seqs({ visibleIn: 'C0PRIVATE' })).toEqual([1, 2, 4, 5]);
      });
    });

    describe('rate limit window', () => {
      it('counts uses of a key up to the limit within the window, refuses the next naming the oldest, and slides', async () => {
        for (const at of [0, 10, 20])
          expect(await store.takeRate('user:U0A', iso(at), iso(at - 60), 3)).toEqual({ taken: true });
        expect(await store.takeRate('user:U0A', iso(30), iso(-30), 3)).toEqual({
          taken: false,
          oldestAt: iso(0),
        });
        // A refused use is not counted: at 60 s the use at 0 s has left the window, so one fits.
        expect(await store.takeRate('user:U0A', iso(60), iso(0), 3)).toEqual({ taken: true });
        expect(await store.takeRate('user:U0A', iso(61), iso(1), 3)).toEqual({
          taken: false,
          oldestAt: iso(10),
        });
        // Another key has its own window.
        expect(await store.takeRate('user:U0B', iso(61), iso(1), 3)).toEqual({ taken: true });
      });

      it('two instances taking at once together allow exactly the limit', async () => {
        const other = await open();
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? other : store).takeRate('user:U0A', iso(i / 100), iso(-60), 10),
          ),
        );
        expect(answers.filter((a) => a.taken)).toHaveLength(10);
        expect(await store.takeRate('user:U0A', iso(1), iso(-59), 10)).toMatchObject({ taken: false });
      });

      it('release gives back one use of that key at that time, and only one', async () => {
        for (const at of [0, 0, 10]) await store.takeRate('user:U0A', iso(at), iso(at - 60), 3);
        await store.takeRate('user:U0B', iso(0), iso(-60), 3);
        expect(await store.takeRate('user:U0A', iso(20), iso(-40), 3)).toMatchObject({ taken: false });
        await store.releaseRate('user:U0A', iso(0));
        const rows = await harness.sql('SELECT rate_key, at FROM rate_events ORDER BY rate_key, at');
        expect(rows.map((r) => `${r.rate_key}@${r.at}`)).toEqual([
          `user:U0A@${iso(0)}`,
          `user:U0A@${iso(10)}`,
          `user:U0B@${iso(0)}`,
        ]);
        expect(await store.takeRate('user:U0A', iso(20), iso(-40), 3)).toEqual({ taken: true });
        // Already forgotten: nothing happens.
        await store.releaseRate('user:U0A', iso(99));
      });

      it("prune forgets every key's uses at or before the cutoff and keeps the rest", async () => {
        await store.takeRate('user:U0A', iso(0), iso(-60), 5);
        await store.takeRate('user:U0B', iso(5), iso(-55), 5);
        await store.takeRate('user:U0B', iso(50), iso(-10), 5);
        expect(await store.pruneRate(iso(5))).toBe(2);
        const rows = await harness.sql('SELECT rate_key FROM rate_events');
        expect(rows.map((r) => r.rate_key)).toEqual(['user:U0B']);
      });
    });

    describe('seen Slack signatures', () => {
      const sig = (n: number) => `v0=${n.toString(16).padStart(64, '0')}`;

      it('remembers a signature once: the same one again, from this or another instance, is a replay', async () => {
        const other = await open();
        expect(await store.rememberSignature(sig(1), iso(0), iso(-600))).toBe(true);
        expect(await store.rememberSignature(sig(1), iso(1), iso(-599))).toBe(false);
        expect(await other.rememberSignature(sig(1), iso(2), iso(-598))).toBe(false);
        expect(await other.rememberSignature(sig(2), iso(2), iso(-598))).toBe(true);
      });

      it('forgets signatures seen before the cutoff, so the table only holds the replay window', async () => {
        await store.rememberSignature(sig(1), iso(0), iso(-600));
        await store.rememberSignature(sig(2), iso(300), iso(-300));
        // Ten minutes later: the first is past the window and gone; the second is kept.
        expect(await store.rememberSignature(sig(3), iso(600), iso(1))).toBe(true);
        const rows = await harness.sql('SELECT signature FROM seen_signatures ORDER BY signature');
        expect(rows.map((r) => r.signature)).toEqual([sig(2), sig(3)]);
        expect(await store.rememberSignature(sig(2), iso(601), iso(1))).toBe(false);
      });

      it('the same signature arriving at two instances at once is first-seen exactly once', async () => {
        const other = await open();
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? other : store).rememberSignature(sig(7), iso(0), iso(-600)),
          ),
        );
        expect(answers.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('limits (rate-limit, concurrency)', () => {
      const limit = (id: string, extra: Partial<Parameters<Store['recordLimit']>[0]> = {}) => ({
        id,
        system: 'pushizo',
        target: 'emails',
        kind: 'concurrency' as const,
        value: 2,
        previous: { value: null },
        setBy: 'U0ALICE',
        setAt: iso(0),
        ...extra,
      });

      /** r-2 replaces r-1 on `pushizo/emails`; r-3 is a rate limit on `zeus/tasks.add`; then reopened. */
      const threeLimitsReopened = async () => {
        await store.recordLimit(limit('r-1', { expiresAt: iso(1800) }), iso(0));
        await store.recordLimit(
          limit('r-2', { value: 4, previous: { value: 3 }, expiresAt: iso(3600) }),
          iso(10),
        );
        await store.recordLimit(
          limit('r-3', {
            target: 'tasks.add',
            system: 'zeus',
            kind: 'rate-limit',
            value: '100/m',
            previous: { workers: { 'w1@h': null, 'w2@h': '10/m' } },
          }),
          iso(20),
        );
        return open();
      };

      it('a new limit on the same target replaces the one in force', async () => {
        const reopened = await threeLimitsReopened();
        expect((await reopened.activeLimits()).map((l) => l.id)).toEqual(['r-2', 'r-3']);
        const replaced = await harness.sql("SELECT state, ended_by FROM queue_limits WHERE id = 'r-1'");
        expect(replaced).toEqual([{ state: 'replaced', ended_by: 'r-2' }]);
      });

      it('a reopened store still has each limit in force with its expiry and what it replaced', async () => {
        const reopened = await threeLimitsReopened();
        expect(await reopened.activeLimits('pushizo')).toEqual([
          { ...limit('r-2', { value: 4, previous: { value: 3 }, expiresAt: iso(3600) }), state: 'active' },
        ]);
        expect((await reopened.activeLimits('zeus'))[0]?.previous).toEqual({
          workers: { 'w1@h': null, 'w2@h': '10/m' },
        });
      });

      /** r-1 on `pushizo/emails` runs out at 60 s; r-2 on `pushizo/sms` never does. */
      const oneDueOneNot = async () => {
        await store.recordLimit(limit('r-1', { expiresAt: iso(60) }), iso(0));
        await store.recordLimit(limit('r-2', { target: 'sms' }), iso(0));
      };

      it('due limits are the active ones whose expiry has come', async () => {
        await oneDueOneNot();
        expect(await store.dueLimits(iso(59))).toEqual([]);
        expect((await store.dueLimits(iso(60))).map((l) => l.id)).toEqual(['r-1']);
      });

      it('ending a limit is a single conditional write', async () => {
        await oneDueOneNot();
        const other = await open();
        const ends = await Promise.all([
          store.endLimit('r-1', 'expired', iso(61), 'queue-ops'),
          other.endLimit('r-1', 'lifted', iso(61), 'U0CAROL'),
        ]);
        expect(ends.filter(Boolean)).toHaveLength(1);
        expect(await store.dueLimits(iso(120))).toEqual([]);
        expect((await store.activeLimits()).map((l) => l.id)).toEqual(['r-2']);
      });

      it('a limit notice goes into the outbox after what waits there, marked as a notice', async () => {
        await store.queueLimitNotice('r-9', { system: 'pushizo', target: 'emails' }, iso(5));
        const next = await store.escalation.nextOutbox('messages', iso(6));
        expect(next).toMatchObject({
          alertId: 'r-9',
          kind: 'notice',
          payload: { system: 'pushizo', target: 'emails' },
        });
      });
    });

    // The escalation half: samples, alerts, the outbox and the leader lease, on both stores.
    describeEscalationStore(() => store, open);
  });
}
