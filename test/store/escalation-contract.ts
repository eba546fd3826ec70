import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/store/alert.js';
import type { Store } from '../../src/store/store.js';

const t0 = Date.parse('2030-01-01T10:00:00.000Z');
const iso = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();

export function sampleAlert(overrides: Partial<Alert> = {}): Alert {
  return {
    id: `a-${Math.random().toString(36).slice(2, 10)}`,
    key: 'backlog|pushizo/dispatch-ios',
    rule: 'backlog',
    metric: 'waiting',
    severity: 'critical',
    subject: 'pushizo/dispatch-ios',
    system: 'pushizo',
    queue: 'dispatch-ios',
    comparator: 'above',
    threshold: 100,
    status: 'firing',
    value: 150,
    worst: 150,
    series: [1, null, 150],
    minutesToDrain: null,
    clearing: 0,
    openedAt: iso(0),
    updatedAt: iso(0),
    lastNotifiedAt: iso(0),
    version: 0,
    ...overrides,
  };
}

/** The escalation half of the store contract (called from `describeStore`). */
export function describeEscalationStore(store: () => Store, open: () => Promise<Store>): void {
  describe('escalation', () => {
    it('samples come back oldest first from a time on, and pruning drops the older ones', async () => {
      const e = store().escalation;
      const ids: number[] = [];
      for (const s of [2, 0, 1]) ids.push(await e.appendSample(iso(s), JSON.stringify({ n: s })));
      expect((await e.listSamples(iso(1))).map((r) => JSON.parse(r.data).n)).toEqual([1, 2]);
      // Each append answers with its row's id, the one pages go by.
      expect((await e.listSamples(iso(0))).map((r) => r.id)).toEqual([ids[1], ids[2], ids[0]]);
      expect(await e.pruneSamples(iso(2))).toBe(2);
      expect((await e.listSamples(iso(0))).map((r) => r.at)).toEqual([iso(2)]);
    });

    it('samples come a page at a time, in order, none skipped or repeated where several share a time', async () => {
      const e = store().escalation;
      // Two samples per instant: a page may end between them.
      for (const s of [0, 1, 2, 3, 4, 5, 6, 7])
        await e.appendSample(iso(Math.floor(s / 2)), JSON.stringify({ n: s }));
      const seen: number[] = [];
      let pages = 0;
      for (let after: { id: number; at: string } | undefined; ; pages++) {
        const rows = await e.listSamples(iso(1), { limit: 3, ...(after ? { after } : {}) });
        seen.push(...rows.map((r) => JSON.parse(r.data).n as number));
        if (rows.length < 3) break;
        after = rows.at(-1)!;
      }
      expect(seen).toEqual([2, 3, 4, 5, 6, 7]);
      expect(pages).toBe(2);
    });

    it('pruning the outbox drops items delivered before the cutoff, never one still waiting', async () => {
      const e = store().escalation;
      const alert = (await e.insertAlert(sampleAlert(), [
        { kind: 'post', payload: {} },
        { kind: 'thread', payload: { n: 1 } },
        { kind: 'thread', payload: { n: 2 } },
      ]))!;
      const sent = (await e.nextOutbox())!;
      await e.completeOutbox(sent.seq, iso(10), 'sent', { alertId: alert.id, channel: 'C0', ts: '1.1' });
      const dropped = (await e.nextOutbox())!;
      await e.completeOutbox(dropped.seq, iso(100), 'dropped', undefined, 'channel_not_found');
      const waiting = (await e.nextOutbox())!;
      expect(await e.pruneOutbox(iso(50))).toBe(1);
      expect(await e.pruneOutbox(iso(1000))).toBe(1);
      expect(await e.pruneOutbox(iso(1000))).toBe(0);
      expect(await e.pendingOutbox()).toBe(1);
      expect((await e.nextOutbox())?.seq).toBe(waiting.seq);
      // The alert keeps where its message is.
      expect((await e.getAlert(alert.id))?.messageTs).toBe('1.1');
    });

    it('one firing alert per key, even from two instances; the loser gets undefined and queues nothing', async () => {
      const other = (await open()).escalation;
      const a = sampleAlert();
      const b = sampleAlert();
      const [x, y] = await Promise.all([
        store().escalation.insertAlert(a, [{ kind: 'post', payload: {} }]),
        other.insertAlert(b, [{ kind: 'post', payload: {} }]),
      ]);
      expect([x, y].filter(Boolean)).toHaveLength(1);
      expect(await store().escalation.pendingOutbox()).toBe(1);
      const firing = await other.listAlerts({ status: 'firing' });
      expect(firing).toHaveLength(1);
      expect(firing[0]).toEqual({ ...(x ?? y), version: 1 });
    });

    it('writes are conditional on the version; a stale write changes nothing and queues nothing', async () => {
      const e = store().escalation;
      const stored = (await e.insertAlert(sampleAlert(), [{ kind: 'post', payload: {} }]))!;
      const next = (await e.writeAlert({ ...stored, value: 200 }, [{ kind: 'update', payload: {} }]))!;
      expect(next.version).toBe(2);
      expect(
        await e.writeAlert({ ...stored, value: 300 }, [{ kind: 'update', payload: {} }]),
      ).toBeUndefined();
      expect((await e.getAlert(stored.id))?.value).toBe(200);
      // A second update while one waits is not queued: the waiting one renders the latest state.
      await e.writeAlert({ ...next, value: 250 }, [
        { kind: 'update', payload: {} },
        { kind: 'thread', payload: { r: 1 } },
      ]);
      const kinds: string[] = [];
      for (let item = await e.nextOutbox(); item; item = await e.nextOutbox()) {
        kinds.push(item.kind);
        await e.completeOutbox(item.seq, iso(5), 'sent');
      }
      expect(kinds).toEqual(['post', 'update', 'thread']);
    });

    it('resolved alerts free the key; the newest resolved one per key is found', async () => {
      const e = store().escalation;
      const first = (await e.insertAlert(sampleAlert(), []))!;
      await e.writeAlert({ ...first, status: 'resolved', resolvedAt: iso(60), updatedAt: iso(60) }, []);
      const second = await e.insertAlert(sampleAlert({ openedAt: iso(120), updatedAt: iso(120) }), []);
      expect(second).toBeDefined();
      expect(await e.listAlerts({ status: 'resolved', keys: [first.key, 'other|x'] })).toEqual([
        expect.objectContaining({ id: first.id, status: 'resolved' }),
      ]);
    });

    it('alerts in a span: firing then, resolved within it, not the ones that ended before or began after', async () => {
      const e = store().escalation;
      const before = (await e.insertAlert(sampleAlert({ key: 'k|before' }), []))!;
      await e.writeAlert({ ...before, status: 'resolved', resolvedAt: iso(60), updatedAt: iso(60) }, []);
      const within = (await e.insertAlert(
        sampleAlert({ key: 'k|within', openedAt: iso(100), updatedAt: iso(100) }),
        [],
      ))!;
      await e.writeAlert({ ...within, status: 'resolved', resolvedAt: iso(200), updatedAt: iso(200) }, []);
      await e.insertAlert(sampleAlert({ key: 'k|firing', openedAt: iso(50), updatedAt: iso(50) }), []);
      await e.insertAlert(sampleAlert({ key: 'k|later', openedAt: iso(900), updatedAt: iso(900) }), []);
      const span = await e.listAlertsInSpan(iso(90), iso(300), 10);
      expect(span.map((a) => a.key)).toEqual(['k|firing', 'k|within']);
      expect(await e.listAlertsInSpan(iso(90), iso(300), 1)).toHaveLength(1);
    });

    it('the outbox: claims exclude others until they lapse; a post records where the message is', async () => {
      const e = store().escalation;
      const other = (await open()).escalation;
      const alert = (await e.insertAlert(sampleAlert(), [{ kind: 'post', payload: {} }]))!;
      const item = (await e.nextOutbox())!;
      expect(await e.claimOutbox(item.seq, 'me', iso(30), iso(0))).toBe(true);
      expect(await other.claimOutbox(item.seq, 'you', iso(30), iso(10))).toBe(false);
      await e.retryOutbox(item.seq, 'HTTP 500', iso(20));
      const again = (await other.nextOutbox())!;
      expect(again).toMatchObject({ seq: item.seq, attempts: 1, lastError: 'HTTP 500', notBefore: iso(20) });
      expect(await other.claimOutbox(item.seq, 'you', iso(60), iso(25))).toBe(true);
      await other.completeOutbox(item.seq, iso(26), 'sent', {
        alertId: alert.id,
        channel: 'C0INC',
        ts: '1.2',
      });
      expect(await e.nextOutbox()).toBeUndefined();
      expect(await e.getAlert(alert.id)).toMatchObject({ channel: 'C0INC', messageTs: '1.2', version: 2 });
    });

    it('outbox lanes: messages in order past any chart; a chart once due and its alert’s earlier messages are out', async () => {
      const e = store().escalation;
      const a = (await e.insertAlert(sampleAlert({ key: 'k|a' }), [
        { kind: 'post', payload: {} },
        { kind: 'chart', payload: {} },
      ]))!;
      await e.insertAlert(sampleAlert({ key: 'k|b' }), [{ kind: 'post', payload: {} }]);
      const postA = (await e.nextOutbox('messages', iso(0)))!;
      expect(postA).toMatchObject({ alertId: a.id, kind: 'post' });
      // The chart waits for its own alert's post, never for another alert's.
      expect(await e.nextOutbox('charts', iso(0))).toBeUndefined();
      await e.completeOutbox(postA.seq, iso(1), 'sent', { alertId: a.id, channel: 'C0INC', ts: '1.1' });
      const chart = (await e.nextOutbox('charts', iso(1)))!;
      expect(chart).toMatchObject({ alertId: a.id, kind: 'chart' });
      // A chart waiting for its retry is passed over by both lanes: the next message is B's post.
      await e.retryOutbox(chart.seq, 'HTTP 500', iso(30));
      expect(await e.nextOutbox('charts', iso(29))).toBeUndefined();
      expect(await e.nextOutbox('messages', iso(29))).toMatchObject({ kind: 'post', seq: chart.seq + 1 });
      expect(await e.nextOutbox('charts', iso(30))).toMatchObject({ seq: chart.seq, attempts: 1 });
      // Without a lane: the oldest item of any kind, as before.
      expect(await e.nextOutbox()).toMatchObject({ seq: chart.seq });
    });

    it('silences: in force until they expire or are lifted (once, from any instance); seen by another instance', async () => {
      const e = store().escalation;
      const other = (await open()).escalation;
      await e.insertSilence({
        id: 's-1',
        pattern: 'pushizo/dispatch-*',
        reason: 'provider outage',
        createdBy: 'U0ALICE',
        createdAt: iso(0),
        expiresAt: iso(7200),
      });
      await e.insertSilence({
        id: 's-2',
        pattern: 'zeus',
        createdBy: 'U0BOB',
        createdAt: iso(10),
        expiresAt: iso(60),
      });
      expect((await other.listSilences(iso(30))).map((s) => s.id)).toEqual(['s-1', 's-2']);
      // Expired: no longer in force, still readable.
      expect((await other.listSilences(iso(60))).map((s) => s.id)).toEqual(['s-1']);
      expect(await other.getSilence('s-2')).toEqual({
        id: 's-2',
        pattern: 'zeus',
        createdBy: 'U0BOB',
        createdAt: iso(10),
        expiresAt: iso(60),
      });
      const lifted = await other.liftSilence('s-1', 'U0BOB', iso(100));
      expect(lifted).toEqual({
        changed: true,
        silence: expect.objectContaining({
          id: 's-1',
          reason: 'provider outage',
          liftedBy: 'U0BOB',
          liftedAt: iso(100),
        }),
      });
      expect(await e.liftSilence('s-1', 'U0ALICE', iso(101))).toMatchObject({
        changed: false,
        silence: { liftedBy: 'U0BOB' },
      });
      expect(await e.liftSilence('s-2', 'U0ALICE', iso(101))).toMatchObject({ changed: false });
      expect(await e.liftSilence('s-none', 'U0ALICE', iso(101))).toBeUndefined();
      expect(await e.listSilences(iso(101))).toEqual([]);
    });

    it('a group lists its alerts, firing and resolved, oldest first; the group id follows writes', async () => {
      const e = store().escalation;
      const a = (await e.insertAlert(sampleAlert({ key: 'k|a', groupId: 'g-1' }), []))!;
      await e.insertAlert(sampleAlert({ key: 'k|b', groupId: 'g-2', openedAt: iso(5) }), []);
      const c = (await e.insertAlert(sampleAlert({ key: 'k|c', groupId: 'g-1', openedAt: iso(10) }), []))!;
      await e.writeAlert({ ...a, status: 'resolved', resolvedAt: iso(20), updatedAt: iso(20) }, []);
      expect((await e.listGroup('g-1')).map((x) => [x.key, x.status])).toEqual([
        ['k|a', 'resolved'],
        ['k|c', 'firing'],
      ]);
      await e.writeAlert({ ...c, groupId: 'g-2' }, []);
      expect((await e.listGroup('g-2')).map((x) => x.key)).toEqual(['k|b', 'k|c']);
    });

    it('the lease: one owner at a time, renewable by its owner, taken over once expired', async () => {
      const e = store().escalation;
      const other = (await open()).escalation;
      expect(await e.acquireLease('monitor', 'A', iso(45), iso(0))).toBe(true);
      expect(await other.acquireLease('monitor', 'B', iso(55), iso(10))).toBe(false);
      expect(await e.acquireLease('monitor', 'A', iso(75), iso(30))).toBe(true);
      expect(await other.acquireLease('monitor', 'B', iso(100), iso(60))).toBe(false);
      expect(await other.acquireLease('monitor', 'B', iso(120), iso(76))).toBe(true);
      expect(await e.getLease('monitor')).toEqual({ owner: 'B', expiresAt: iso(120) });
      // A former owner renews nothing while B holds it; B renews its own even a moment after it
      // ran out, nobody having taken it; run out again, A takes it over, as B sees.
      expect(await e.acquireLease('monitor', 'A', iso(130), iso(90))).toBe(false);
      expect(await other.acquireLease('monitor', 'B', iso(125), iso(121))).toBe(true);
      expect(await e.acquireLease('monitor', 'A', iso(140), iso(126))).toBe(true);
      expect(await other.getLease('monitor')).toEqual({ owner: 'A', expiresAt: iso(140) });
      expect(await other.acquireLease('monitor', 'B', iso(150), iso(130))).toBe(false);
      await other.releaseLease('monitor', 'B');
      expect((await e.getLease('monitor'))?.owner).toBe('A');
      await e.releaseLease('monitor', 'A');
      expect(await e.getLease('monitor')).toBeUndefined();
    });
  });
}
