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

    it('the newest samples come newest first (what status reads the monitor sightings from)', async () => {
      const e = store().escalation;
      await e.pruneSamples(iso(1000));
      expect(await e.newestSamples(1)).toEqual([]);
      for (const s of [3, 5, 4]) await e.appendSample(iso(s), JSON.stringify({ n: s }));
      expect((await e.newestSamples(2)).map((r) => JSON.parse(r.data).n)).toEqual([5, 4]);
      expect((await e.newestSamples(10)).map((r) => r.at)).toEqual([iso(5), iso(4), iso(3)]);
      await e.pruneSamples(iso(1000));
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

    /** Two instances insert a firing alert under the same key at the same moment. */
    const insertRace = async () => {
      const other = (await open()).escalation;
      const [x, y] = await Promise.all([
        store().escalation.insertAlert(sampleAlert(), [{ kind: 'post', payload: {} }]),
        other.insertAlert(sampleAlert(), [{ kind: 'post', payload: {} }]),
      ]);
      return { other, x, y };
    };

    it('one firing alert per key, even from two instances', async () => {
      const { other, x, y } = await insertRace();
      const firing = await other.listAlerts({ status: 'firing' });
      expect(firing).toHaveLength(1);
      expect(firing[0]).toEqual({ ...(x ?? y), version: 1 });
    });

    it('the instance that loses the race gets undefined and queues nothing', async () => {
      const { x, y } = await insertRace();
      expect([x, y].filter(Boolean)).toHaveLength(1);
      expect(await store().escalation.pendingOutbox()).toBe(1);
    });

    /** An alert written once at its version, then again from the version it had before that. */
    const staleWrite = async () => {
      const e = store().escalation;
      const stored = (await e.insertAlert(sampleAlert(), [{ kind: 'post', payload: {} }]))!;
      const next = (await e.writeAlert({ ...stored, value: 200 }, [{ kind: 'update', payload: {} }]))!;
      const stale = await e.writeAlert({ ...stored, value: 300 }, [{ kind: 'update', payload: {} }]);
      return { e, stored, next, stale };
    };

    it('writes are conditional on the version', async () => {
      const { next, stale } = await staleWrite();
      expect(next.version).toBe(2);
      expect(stale).toBeUndefined();
    });

    it('a stale write changes nothing', async () => {
      const { e, stored } = await staleWrite();
      expect((await e.getAlert(stored.id))?.value).toBe(200);
    });

    it('a stale write queues nothing', async () => {
      const { e, next } = await staleWrite();
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

    it('an alert keeps the cause it opened with, through every write (issue 36 §3)', async () => {
      const e = store().escalation;
      const cause = {
        id: 'no-workers',
        summary: '3 queues have no consumer: worker w1 stopped answering after 03:12 UTC',
        evidence: '12 waiting on 3 queues (q1 the deepest) with no worker consuming them',
        fixes: [{ command: 'restart zeus/pool' }],
        queues: 3,
      };
      const stored = (await e.insertAlert(sampleAlert({ key: 'k|caused', cause }), []))!;
      expect(stored.cause).toEqual(cause);
      await e.writeAlert({ ...stored, value: 7, updatedAt: iso(30) }, []);
      const again = await e.getAlert(stored.id);
      expect(again?.value).toBe(7);
      expect(again?.cause).toEqual(cause);
      const plain = (await e.insertAlert(sampleAlert({ key: 'k|plain' }), []))!;
      expect((await e.getAlert(plain.id))?.cause).toBeUndefined();
    });

    /** An alert resolved at 60 s, and a new one under its key at 120 s. */
    const resolvedThenAgain = async () => {
      const e = store().escalation;
      const first = (await e.insertAlert(sampleAlert(), []))!;
      await e.writeAlert({ ...first, status: 'resolved', resolvedAt: iso(60), updatedAt: iso(60) }, []);
      const second = await e.insertAlert(sampleAlert({ openedAt: iso(120), updatedAt: iso(120) }), []);
      return { e, first, second };
    };

    it('a resolved alert frees its key', async () => {
      const { second } = await resolvedThenAgain();
      expect(second).toBeDefined();
    });

    it('the newest resolved alert of a key is found', async () => {
      const { e, first } = await resolvedThenAgain();
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

    /**
     * An alert's post claimed by one instance until 30 s, refused to another at 10 s, handed back
     * for a retry at 20 s, and claimed by the other at 25 s: what each step answered.
     */
    const claimsOfOnePost = async () => {
      const e = store().escalation;
      const other = (await open()).escalation;
      const alert = (await e.insertAlert(sampleAlert(), [{ kind: 'post', payload: {} }]))!;
      const item = (await e.nextOutbox())!;
      const mine = await e.claimOutbox(item.seq, 'me', iso(30), iso(0));
      const theirs = await other.claimOutbox(item.seq, 'you', iso(30), iso(10));
      await e.retryOutbox(item.seq, 'HTTP 500', iso(20));
      const again = (await other.nextOutbox())!;
      const afterRetry = await other.claimOutbox(item.seq, 'you', iso(60), iso(25));
      return { e, other, alert, item, mine, theirs, again, afterRetry };
    };

    it('an outbox claim excludes other instances until it lapses', async () => {
      const { item, mine, theirs, again, afterRetry } = await claimsOfOnePost();
      expect(mine).toBe(true);
      expect(theirs).toBe(false);
      expect(again).toMatchObject({ seq: item.seq, attempts: 1, lastError: 'HTTP 500', notBefore: iso(20) });
      expect(afterRetry).toBe(true);
    });

    it('a sent post records where its message is', async () => {
      const { e, other, alert, item } = await claimsOfOnePost();
      await other.completeOutbox(item.seq, iso(26), 'sent', {
        alertId: alert.id,
        channel: 'C0INC',
        ts: '1.2',
      });
      expect(await e.nextOutbox()).toBeUndefined();
      expect(await e.getAlert(alert.id)).toMatchObject({ channel: 'C0INC', messageTs: '1.2', version: 2 });
    });

    /**
     * Alert A's post and chart, then B's post, taken lane by lane: what each lane offered when. A's
     * chart fails once, to be retried at 30 s.
     */
    const lanes = async () => {
      const e = store().escalation;
      const a = (await e.insertAlert(sampleAlert({ key: 'k|a' }), [
        { kind: 'post', payload: {} },
        { kind: 'chart', payload: {} },
      ]))!;
      await e.insertAlert(sampleAlert({ key: 'k|b' }), [{ kind: 'post', payload: {} }]);
      const postA = (await e.nextOutbox('messages', iso(0)))!;
      const chartBeforeItsPost = await e.nextOutbox('charts', iso(0));
      await e.completeOutbox(postA.seq, iso(1), 'sent', { alertId: a.id, channel: 'C0INC', ts: '1.1' });
      const chart = (await e.nextOutbox('charts', iso(1)))!;
      await e.retryOutbox(chart.seq, 'HTTP 500', iso(30));
      const chartBeforeRetry = await e.nextOutbox('charts', iso(29));
      const messageBeforeRetry = await e.nextOutbox('messages', iso(29));
      const chartAtRetry = await e.nextOutbox('charts', iso(30));
      const anyLane = await e.nextOutbox();
      return {
        a,
        postA,
        chartBeforeItsPost,
        chart,
        chartBeforeRetry,
        messageBeforeRetry,
        chartAtRetry,
        anyLane,
      };
    };

    it('the messages lane takes messages in order, past any chart', async () => {
      const { a, postA, chart, messageBeforeRetry } = await lanes();
      expect(postA).toMatchObject({ alertId: a.id, kind: 'post' });
      // A chart waiting for its retry is passed over: the next message is B's post.
      expect(messageBeforeRetry).toMatchObject({ kind: 'post', seq: chart.seq + 1 });
    });

    it('a chart goes out once it is due and its alert’s earlier messages are out', async () => {
      const { a, chartBeforeItsPost, chart, chartBeforeRetry, chartAtRetry } = await lanes();
      // The chart waits for its own alert's post, never for another alert's.
      expect(chartBeforeItsPost).toBeUndefined();
      expect(chart).toMatchObject({ alertId: a.id, kind: 'chart' });
      expect(chartBeforeRetry).toBeUndefined();
      expect(chartAtRetry).toMatchObject({ seq: chart.seq, attempts: 1 });
    });

    it('without a lane, the oldest item of any kind comes next', async () => {
      const { chart, anyLane } = await lanes();
      expect(anyLane).toMatchObject({ seq: chart.seq });
    });

    /**
     * s-1 (2 h) and s-2 (ending at 60 s) made on one instance, read and lifted from another and
     * back: what each step answered.
     */
    const silencesOverTime = async () => {
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
      const inForceAt30 = await other.listSilences(iso(30));
      const inForceAt60 = await other.listSilences(iso(60));
      const expired = await other.getSilence('s-2');
      const lifted = await other.liftSilence('s-1', 'U0BOB', iso(100));
      const liftedAgain = await e.liftSilence('s-1', 'U0ALICE', iso(101));
      const expiredLifted = await e.liftSilence('s-2', 'U0ALICE', iso(101));
      const unknownLifted = await e.liftSilence('s-none', 'U0ALICE', iso(101));
      const inForceAt101 = await e.listSilences(iso(101));
      return {
        inForceAt30,
        inForceAt60,
        expired,
        lifted,
        liftedAgain,
        expiredLifted,
        unknownLifted,
        inForceAt101,
      };
    };

    it('silences made on one instance are seen by another', async () => {
      const { inForceAt30 } = await silencesOverTime();
      expect(inForceAt30.map((s) => s.id)).toEqual(['s-1', 's-2']);
    });

    it('an expired silence is no longer in force, and still readable', async () => {
      const { inForceAt60, expired } = await silencesOverTime();
      expect(inForceAt60.map((s) => s.id)).toEqual(['s-1']);
      expect(expired).toEqual({
        id: 's-2',
        pattern: 'zeus',
        createdBy: 'U0BOB',
        createdAt: iso(10),
        expiresAt: iso(60),
      });
    });

    it('a silence is lifted once, from any instance', async () => {
      const { lifted, liftedAgain } = await silencesOverTime();
      expect(lifted).toEqual({
        changed: true,
        silence: expect.objectContaining({
          id: 's-1',
          reason: 'provider outage',
          liftedBy: 'U0BOB',
          liftedAt: iso(100),
        }),
      });
      expect(liftedAgain).toMatchObject({
        changed: false,
        silence: { liftedBy: 'U0BOB' },
      });
    });

    it('lifting an expired silence changes nothing, and an unknown one is not found', async () => {
      const { expiredLifted, unknownLifted } = await silencesOverTime();
      expect(expiredLifted).toMatchObject({ changed: false });
      expect(unknownLifted).toBeUndefined();
    });

    it('a silence lifted or expired is no longer in force', async () => {
      const { inForceAt101 } = await silencesOverTime();
      expect(inForceAt101).toEqual([]);
    });

    /** Alerts a and c in group g-1, b in g-2; a resolved at 20 s. */
    const twoGroups = async () => {
      const e = store().escalation;
      const a = (await e.insertAlert(sampleAlert({ key: 'k|a', groupId: 'g-1' }), []))!;
      await e.insertAlert(sampleAlert({ key: 'k|b', groupId: 'g-2', openedAt: iso(5) }), []);
      const c = (await e.insertAlert(sampleAlert({ key: 'k|c', groupId: 'g-1', openedAt: iso(10) }), []))!;
      await e.writeAlert({ ...a, status: 'resolved', resolvedAt: iso(20), updatedAt: iso(20) }, []);
      return { e, c };
    };

    it('a group lists its alerts, firing and resolved, oldest first', async () => {
      const { e } = await twoGroups();
      expect((await e.listGroup('g-1')).map((x) => [x.key, x.status])).toEqual([
        ['k|a', 'resolved'],
        ['k|c', 'firing'],
      ]);
    });

    it('an alert’s group id follows its writes', async () => {
      const { e, c } = await twoGroups();
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
