import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { EscalationStore, SamplePage, Store } from '../store/store.js';
import { type Alert, ackAlert, snoozeAlert, type Transition } from './lifecycle.js';
import type { Sample } from './samples.js';
import type { TrendSource } from './trend.js';

/** What people do with alerts (`alerts`, `ack`, `snooze`, and the buttons behind them). */
export interface AlertService {
  /** Firing alerts, oldest first. */
  open(): Promise<Alert[]>;
  /** Acknowledges a firing alert: reminders and escalation stop. Idempotent. */
  ack(id: string, by: string): Promise<{ alert: Alert; changed: boolean }>;
  /** Silences reminders and escalation until `now + ms`. */
  snooze(id: string, by: string, ms: number): Promise<{ alert: Alert; changed: boolean }>;
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
        for (const row of rows) out.push(narrowSample(JSON.parse(row.data) as Sample, only));
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

export function createAlertService(deps: { store: Store; now: () => Date }): AlertService {
  const listeners: (() => void)[] = [];

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
        for (const listener of listeners) listener();
        return { alert: stored, changed: true };
      }
    }
    throw new OpsError(ErrorCode.StoreUnavailable, { reason: messages().escalation.keptChanging });
  }

  return {
    open: () => deps.store.escalation.listAlerts({ status: 'firing' }),
    ack: (id, by) => change(id, (alert, now) => ackAlert(alert, by, now)),
    snooze: (id, by, ms) => change(id, (alert, now) => snoozeAlert(alert, by, now + ms, now)),
    onChange(listener) {
      listeners.push(listener);
    },
    trend: trendSource(deps.store.escalation),
  };
}
