import type { RuleMetric } from '../config/schema.js';
import type { Alert } from '../store/alert.js';
import type { RuleResult } from './rules.js';

export type { Alert };

/** What to tell Slack about an alert. Posts and updates render the alert as stored at delivery. */
export type AlertEffect =
  | { kind: 'post' }
  | { kind: 'update' }
  | {
      kind: 'thread';
      reason: 'renotify' | 'escalate' | 'snooze-over' | 'reopened';
      /** `escalate`: user and group ids to mention. */
      mention?: string[];
      /** The value when it was decided (a reminder says what it was then, even if sent late). */
      value: number | null;
    };

export interface LifecycleSettings {
  renotifyMinutes: number;
  escalateAfterMinutes: number;
  escalateTo: readonly string[];
  clearAfterSamples: number;
}

const finite = (v: number): number | null => (Number.isFinite(v) ? v : null);
const iso = (ms: number) => new Date(ms).toISOString();
const ms = (text: string | undefined) => (text === undefined ? Number.NaN : Date.parse(text));

/** Values as the message shows them, so an update is only sent when what people see changes. */
export function displayValue(metric: RuleMetric, value: number | null): string {
  if (value === null) return '∞';
  if (metric === 'redisMemoryRatio') return value.toFixed(2);
  if (metric === 'drainRate') return value.toFixed(1);
  return String(Math.round(value));
}

function signature(alert: Alert): string {
  return JSON.stringify([
    alert.status,
    displayValue(alert.metric, alert.value),
    alert.minutesToDrain === undefined || alert.minutesToDrain === null
      ? alert.minutesToDrain
      : Math.round(alert.minutesToDrain),
    alert.clearing,
    alert.ackedBy ?? null,
    alert.snoozedUntil ?? null,
    alert.escalatedAt ?? null,
    alert.silencedBy ?? null,
  ]);
}

function worse(alert: Pick<Alert, 'comparator'>, a: number | null, b: number | null): number | null {
  if (a === null || b === null) return null;
  return alert.comparator === 'above' ? Math.max(a, b) : Math.min(a, b);
}

export function isSnoozed(alert: Alert, now: number): boolean {
  return alert.snoozedUntil !== undefined && ms(alert.snoozedUntil) > now;
}

export interface Transition {
  /** The alert to store (unchanged object when nothing changed). */
  alert?: Alert;
  effects: AlertEffect[];
  changed: boolean;
}

/**
 * One tick for one rule and subject.
 * - `open`: the firing alert for this key, if any; `lastResolved`: the newest resolved one.
 * - A breach with no open alert opens one (one post), or, when the last one resolved less than
 *   `renotifyMinutes` ago, reopens that one in place: a value flapping around its threshold keeps
 *   one message instead of posting a new one each time it crosses.
 * - While firing: values update the message in place; unacknowledged and not snoozed, a reminder
 *   goes to the thread every `renotifyMinutes` and `escalateTo` is mentioned once after
 *   `escalateAfterMinutes`; a snooze that ran out says so in the thread.
 * - `clearAfterSamples` samples in a row back under the threshold resolve it.
 * - An unknown value (Redis unreachable) changes nothing: not seeing a problem is not its end.
 * - `silence` (the id of a silence covering it): tracked as usual, but quiet like an acked alert;
 *   a new one is not posted until no silence covers it any more (`postHeld`).
 */
export function advanceAlert(
  open: Alert | undefined,
  lastResolved: Alert | undefined,
  result: RuleResult,
  now: number,
  settings: LifecycleSettings,
  newId: () => string,
  silence?: string,
): Transition {
  const at = iso(now);
  const silenced = silence === undefined ? {} : { silencedBy: silence };
  if (!open) {
    if (!result.firing || result.value === undefined) return { effects: [], changed: false };
    const value = finite(result.value);
    const fresh = {
      value,
      series: result.series,
      ...(result.minutesToDrain === undefined ? {} : { minutesToDrain: finite(result.minutesToDrain) }),
      clearing: 0,
      updatedAt: at,
      lastNotifiedAt: at,
    };
    if (
      lastResolved?.resolvedAt !== undefined &&
      now - ms(lastResolved.resolvedAt) < settings.renotifyMinutes * 60_000
    ) {
      const {
        resolvedAt: _r,
        ackedBy: _a,
        ackedAt: _t,
        snoozedBy: _s,
        snoozedUntil: _u,
        silencedBy: _q,
        ...rest
      } = lastResolved;
      const alert: Alert = {
        ...rest,
        ...fresh,
        ...silenced,
        status: 'firing',
        worst: worse(rest, rest.worst, value),
      };
      // Never posted (silenced before): posted now unless a silence still covers it.
      if (rest.postHeld) {
        if (silence !== undefined) return { alert, effects: [], changed: true };
        delete alert.postHeld;
        return { alert, effects: [{ kind: 'post' }], changed: true };
      }
      const effects: AlertEffect[] = [{ kind: 'update' }];
      if (silence === undefined) effects.push({ kind: 'thread', reason: 'reopened', value });
      return { alert, effects, changed: true };
    }
    const alert: Alert = {
      id: newId(),
      key: result.key,
      rule: result.rule.name,
      metric: result.rule.metric,
      severity: result.rule.severity,
      subject: result.subject,
      system: result.system,
      ...(result.queue === undefined ? {} : { queue: result.queue }),
      comparator: result.comparator,
      threshold: result.threshold,
      status: 'firing',
      worst: value,
      openedAt: at,
      version: 0,
      ...fresh,
      ...silenced,
    };
    if (silence !== undefined) return { alert: { ...alert, postHeld: true }, effects: [], changed: true };
    const effects: AlertEffect[] = [{ kind: 'post' }];
    if (settings.escalateTo.length > 0 && settings.escalateAfterMinutes === 0) {
      alert.escalatedAt = at;
      effects.push({ kind: 'thread', reason: 'escalate', mention: [...settings.escalateTo], value });
    }
    return { alert, effects, changed: true };
  }

  if (open.status !== 'firing' || result.value === undefined)
    return { alert: open, effects: [], changed: false };
  const value = finite(result.value);
  const next: Alert = {
    ...open,
    value,
    series: result.series,
    ...(result.minutesToDrain === undefined ? {} : { minutesToDrain: finite(result.minutesToDrain) }),
    clearing: result.breachNow ? 0 : result.cleanRun,
  };
  if (silence === undefined) delete next.silencedBy;
  else next.silencedBy = silence;
  if (result.breachNow) next.worst = worse(open, open.worst, value);
  const effects: AlertEffect[] = [];
  if (next.clearing >= settings.clearAfterSamples) {
    next.status = 'resolved';
    next.resolvedAt = at;
    next.updatedAt = at;
    // Never posted (silenced all along): nobody was told, so there is nothing to update.
    return { alert: next, effects: next.postHeld ? [] : [{ kind: 'update' }], changed: true };
  }
  if (next.postHeld) {
    if (silence !== undefined) {
      const changed = JSON.stringify(next) !== JSON.stringify(open);
      if (changed) next.updatedAt = at;
      return { alert: changed ? next : open, effects: [], changed };
    }
    // The silence is over and it still fires: now it is posted, as a new alert would be.
    delete next.postHeld;
    next.lastNotifiedAt = at;
    next.updatedAt = at;
    return { alert: next, effects: [{ kind: 'post' }], changed: true };
  }
  if (next.snoozedUntil !== undefined && ms(next.snoozedUntil) <= now) {
    delete next.snoozedUntil;
    delete next.snoozedBy;
    if (silence === undefined) {
      next.lastNotifiedAt = at;
      effects.push({ kind: 'thread', reason: 'snooze-over', value });
    }
  }
  const quiet = next.ackedBy !== undefined || isSnoozed(next, now) || silence !== undefined;
  if (!quiet && now - ms(next.lastNotifiedAt) >= settings.renotifyMinutes * 60_000) {
    next.lastNotifiedAt = at;
    effects.push({ kind: 'thread', reason: 'renotify', value });
  }
  if (
    !quiet &&
    next.escalatedAt === undefined &&
    settings.escalateTo.length > 0 &&
    now - ms(next.openedAt) >= settings.escalateAfterMinutes * 60_000
  ) {
    next.escalatedAt = at;
    effects.push({ kind: 'thread', reason: 'escalate', mention: [...settings.escalateTo], value });
  }
  if (signature(next) !== signature(open)) effects.unshift({ kind: 'update' });
  const changed = effects.length > 0 || JSON.stringify(next) !== JSON.stringify(open);
  if (changed) next.updatedAt = at;
  return { alert: changed ? next : open, effects, changed };
}

/** `ack`: reminders and escalation stop; the message says who. Only a firing alert can be acked. */
export function ackAlert(alert: Alert, by: string, now: number): Transition {
  if (alert.status !== 'firing' || alert.ackedBy !== undefined) return { alert, effects: [], changed: false };
  return {
    alert: { ...alert, ackedBy: by, ackedAt: iso(now), updatedAt: iso(now) },
    effects: [{ kind: 'update' }],
    changed: true,
  };
}

/** `snooze`: no reminders or escalation until `until`; then the thread hears it is still on. */
export function snoozeAlert(alert: Alert, by: string, until: number, now: number): Transition {
  if (alert.status !== 'firing') return { alert, effects: [], changed: false };
  return {
    alert: { ...alert, snoozedBy: by, snoozedUntil: iso(until), updatedAt: iso(now) },
    effects: [{ kind: 'update' }],
    changed: true,
  };
}
