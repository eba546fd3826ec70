import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { EscalationStore, Store } from '../store/store.js';
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

/** `TrendSource` over the store: the samples as the monitor stored them, and the alert history. */
export function trendSource(store: EscalationStore): TrendSource {
  return {
    async samples(sinceMs) {
      const rows = await store.listSamples(new Date(sinceMs).toISOString());
      return rows.map((row) => JSON.parse(row.data) as Sample);
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
