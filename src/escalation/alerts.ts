import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { Silence } from '../store/alert.js';
import type { EscalationStore, SamplePage, Store } from '../store/store.js';
import { type Alert, ackAlert, snoozeAlert, type Transition } from './lifecycle.js';
import type { PagerAnswerOutcome, Paging } from './paging.js';
import { decodeSample, type Sample } from './samples.js';
import { newSilenceId, silenceMatches } from './silences.js';
import type { TrendSource } from './trend.js';

/** What people do with alerts (`alerts`, `ack`, `snooze`, and the buttons behind them). */
export interface AlertService {
  /** Firing alerts, oldest first. */
  open(): Promise<Alert[]>;
  /** Acknowledges a firing alert: reminders and escalation stop. Idempotent. */
  ack(id: string, by: string): Promise<{ alert: Alert; changed: boolean }>;
  /** Silences reminders and escalation until `now + ms`. */
  snooze(id: string, by: string, ms: number): Promise<{ alert: Alert; changed: boolean }>;
  /**
   * Acknowledges every firing, unacknowledged alert of `system` in one step; returns those it
   * acknowledged (an alert acked or resolved meanwhile is left out).
   */
  ackAll(system: string, by: string): Promise<Alert[]>;
  /**
   * Silences alerts matching `pattern` (checked by the caller) for `ms`: they are tracked but
   * notify nobody. Firing ones are marked at once (their message says so); returns those too.
   */
  silence(
    pattern: string,
    ms: number,
    by: string,
    reason?: string,
  ): Promise<{ silence: Silence; alerts: Alert[] }>;
  /** Silences in force now, oldest first. */
  silences(): Promise<Silence[]>;
  /** Lifts a silence; `UnknownSilence` when there is none with that id. */
  unsilence(id: string, by: string): Promise<{ silence: Silence; changed: boolean }>;
  /**
   * `page <alert-id> [pager]`: pages the alert's message now through the pager named, or every
   * pager matching it. `NoPager` when none is configured or none matches.
   */
  page(
    id: string,
    pager: string | undefined,
    by: string,
  ): Promise<{ alert: Alert; paged: string[]; already: string[] }>;
  /** PagerDuty's webhook said a page was acknowledged or resolved there (see `Paging`). */
  answerFromPagerDuty(answer: Parameters<Paging['answerFromPagerDuty']>[0]): Promise<PagerAnswerOutcome>;
  /** Called after a change queued a Slack update (the bot drains the outbox then). */
  onChange(listener: () => void): void;
  /** The monitor's samples and alert history, for `trend`. */
  trend: TrendSource;
}

/** Samples read per store call by `trend`. */
const SAMPLE_PAGE = 100;

/** The sample with only one system, and of its queues only one (the rest is what `trend` does not draw). */
function narrowSample(sample: Sample, only: { system: string; queue: string }): Sample {
  const systems = sample.systems
    .filter((s) => s.name === only.system)
    .map((s) => (s.ok ? { ...s, queues: s.queues.filter((q) => q.name === only.queue), workers: null } : s));
  return { ...sample, systems };
}

/** `--json` data of one alert (README: `alerts`, `ack`, `snooze`). */
export function alertJson(alert: Alert) {
  return {
    id: alert.id,
    rule: alert.rule,
    severity: alert.severity,
    subject: alert.subject,
    metric: alert.metric,
    value: alert.value,
    comparator: alert.comparator,
    threshold: alert.threshold,
    status: alert.status,
    openedAt: alert.openedAt,
    ...(alert.resolvedAt ? { resolvedAt: alert.resolvedAt } : {}),
    ackedBy: alert.ackedBy ?? null,
    snoozedUntil: alert.snoozedUntil ?? null,
    /** The silence holding its notifications (`silence …`), or null. */
    silencedBy: alert.silencedBy ?? null,
    escalatedAt: alert.escalatedAt ?? null,
    messageTs: alert.messageTs ?? null,
    // Who was paged for its message, when, and who acknowledged where (`pagerduty:<user id>`, or
    // a Slack id); a grouped alert shows its group's pages.
    pages: (alert.pages ?? []).map((p) => ({
      pager: p.pager,
      at: p.at,
      acknowledgedBy: p.acknowledgedBy ?? null,
      acknowledgedAt: p.acknowledgedAt ?? null,
    })),
    // The cause diagnosed when it opened (issue 36 §3), fixed for its life; null when none was strong.
    cause: alert.cause
      ? {
          id: alert.cause.id,
          summary: alert.cause.summary,
          evidence: alert.cause.evidence,
          fixes: alert.cause.fixes.map((f) => ({ command: f.command })),
        }
      : null,
  };
}

/**
 * Alerts as people see them: a grouped alert carries its group's pages (kept on the alert of the
 * group that was paged first), so `alerts`, `--json` and the Home tab show each one's page.
 */
export async function withGroupPages(store: EscalationStore, alerts: readonly Alert[]): Promise<Alert[]> {
  const groups = [
    ...new Set(alerts.flatMap((a) => (a.groupId !== undefined && !a.pages?.length ? [a.groupId] : []))),
  ];
  if (groups.length === 0) return [...alerts];
  const pages = new Map<string, NonNullable<Alert['pages']>>();
  // Bounded: a storm's groups past fifty are listed without their page.
  const read = await Promise.all(
    groups.slice(0, 50).map(async (groupId) => [groupId, await store.listGroup(groupId)] as const),
  );
  for (const [groupId, members] of read) {
    const found = members.flatMap((m) => m.pages ?? []);
    if (found.length) pages.set(groupId, found);
  }
  return alerts.map((a) =>
    a.groupId !== undefined && !a.pages?.length && pages.has(a.groupId)
      ? { ...a, pages: pages.get(a.groupId)! }
      : a,
  );
}

/** `TrendSource` over the store: the samples as the monitor stored them, and the alert history. */
export function trendSource(store: EscalationStore): TrendSource {
  return {
    async samples(sinceMs, only) {
      const out: Sample[] = [];
      const sinceAt = new Date(sinceMs).toISOString();
      // A page at a time, each parsed and narrowed before the next is read: a day of a thousand
      // queues every 30 s is some 150 MB of JSON, one queue's share of it a few hundred KB.
      for (let after: SamplePage['after']; ; ) {
        const rows = await store.listSamples(sinceAt, { limit: SAMPLE_PAGE, ...(after ? { after } : {}) });
        for (const row of rows) out.push(narrowSample(decodeSample(row.data), only));
        if (rows.length < SAMPLE_PAGE) return out;
        after = rows.at(-1)!;
      }
    },
    async alerts(keys) {
      const [firing, resolved] = await Promise.all([
        store.listAlerts({ status: 'firing' }),
        keys.length ? store.listAlerts({ status: 'resolved', keys }) : Promise.resolve([]),
      ]);
      return [...firing, ...resolved];
    },
  };
}

export function createAlertService(deps: { store: Store; now: () => Date; paging?: Paging }): AlertService {
  const listeners: (() => void)[] = [];

  /** An ack, snooze or silence may acknowledge a page, or hold one back: its message's pages follow. */
  async function settlePages(alerts: readonly Alert[]): Promise<void> {
    if (!deps.paging || alerts.length === 0) return;
    // The change itself is stored: a page that cannot be queued now (the store busy) is queued
    // by the monitor's next tick, and the person's ack still answers as done.
    await deps.paging.settle(alerts).catch(() => undefined);
  }

  function requirePaging(): Paging {
    if (!deps.paging) throw new OpsError(ErrorCode.NoPager, { id: '', valid: [] });
    return deps.paging;
  }

  /** Reads, applies, and writes conditionally on the version; a lost race is retried from fresh. */
  async function change(id: string, apply: (alert: Alert, now: number) => Transition) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const alert = await deps.store.escalation.getAlert(id);
      if (!alert) throw new OpsError(ErrorCode.UnknownAlert, { id });
      if (alert.status !== 'firing') throw new OpsError(ErrorCode.AlertNotFiring, { id });
      const step = apply(alert, deps.now().getTime());
      if (!step.changed || !step.alert) return { alert, changed: false };
      const stored = await deps.store.escalation.writeAlert(
        step.alert,
        step.effects.map((e) => ({ kind: e.kind, payload: {} })),
      );
      if (stored) {
        await settlePages([stored]);
        for (const listener of listeners) listener();
        return { alert: stored, changed: true };
      }
    }
    throw new OpsError(ErrorCode.StoreUnavailable, { reason: messages().escalation.keptChanging });
  }

  /** `change` over several alerts, skipping those that resolved meanwhile. */
  async function changeEach(alerts: readonly Alert[], apply: (alert: Alert, now: number) => Transition) {
    const out: Alert[] = [];
    for (const alert of alerts) {
      try {
        const done = await change(alert.id, apply);
        if (done.changed) out.push(done.alert);
      } catch (error) {
        if (error instanceof OpsError && error.code === ErrorCode.AlertNotFiring) continue;
        throw error;
      }
    }
    return out;
  }

  /** Marks (or unmarks) an alert as silenced by `id`; its message is updated to say so. */
  const markSilenced =
    (id: string | undefined) =>
    (alert: Alert, now: number): Transition => {
      if (alert.silencedBy === id) return { alert, effects: [], changed: false };
      const next: Alert = { ...alert, updatedAt: new Date(now).toISOString() };
      if (id === undefined) delete next.silencedBy;
      else next.silencedBy = id;
      return { alert: next, effects: alert.postHeld ? [] : [{ kind: 'update' }], changed: true };
    };

  return {
    async open() {
      const firing = await deps.store.escalation.listAlerts({ status: 'firing' });
      // Without pagers nothing was paged: no group is read for its pages.
      return deps.paging?.enabled ? await withGroupPages(deps.store.escalation, firing) : firing;
    },
    async page(id, pager, by) {
      const done = await requirePaging().pageNow(id, pager, by);
      if (done.paged.length) for (const listener of listeners) listener();
      return done;
    },
    async answerFromPagerDuty(answer) {
      const done = await requirePaging().answerFromPagerDuty(answer);
      if (done.changed) {
        await settlePages(done.alerts);
        for (const listener of listeners) listener();
      }
      return done;
    },
    async ackAll(system, by) {
      const open = await deps.store.escalation.listAlerts({ status: 'firing' });
      return await changeEach(
        open.filter((a) => a.system === system && a.ackedBy === undefined),
        (alert, now) => ackAlert(alert, by, now),
      );
    },
    async silence(pattern, ms, by, reason) {
      const now = deps.now();
      const silence: Silence = {
        id: newSilenceId(),
        pattern,
        ...(reason ? { reason } : {}),
        createdBy: by,
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + ms).toISOString(),
      };
      await deps.store.escalation.insertSilence(silence);
      const open = await deps.store.escalation.listAlerts({ status: 'firing' });
      const covered = open.filter((a) => a.silencedBy === undefined && silenceMatches(pattern, a));
      await changeEach(covered, markSilenced(silence.id));
      // The Home tabs list silences: they refresh even when no alert changed.
      for (const listener of listeners) listener();
      return { silence, alerts: covered };
    },
    silences: () => deps.store.escalation.listSilences(deps.now().toISOString()),
    async unsilence(id, by) {
      const lifted = await deps.store.escalation.liftSilence(id, by, deps.now().toISOString());
      if (!lifted) throw new OpsError(ErrorCode.UnknownSilence, { id });
      if (lifted.changed) {
        // Their messages stop saying so now; the next tick posts the ones held back, and marks
        // any another silence still covers.
        const open = await deps.store.escalation.listAlerts({ status: 'firing' });
        await changeEach(
          open.filter((a) => a.silencedBy === id && !a.postHeld),
          markSilenced(undefined),
        );
        for (const listener of listeners) listener();
      }
      return lifted;
    },
    ack: (id, by) => change(id, (alert, now) => ackAlert(alert, by, now)),
    snooze: (id, by, ms) => change(id, (alert, now) => snoozeAlert(alert, by, now + ms, now)),
    onChange(listener) {
      listeners.push(listener);
    },
    trend: trendSource(deps.store.escalation),
  };
}
