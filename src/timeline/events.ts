import type { Alert } from '../store/alert.js';
import type { AuditEntry } from '../store/store.js';
import { factsOf } from '../verbs.js';

/** One thing that happened, in words-free form: the builders put it into words per locale. */
export type TimelineEvent =
  | {
      at: string;
      kind: 'alert.fired' | 'alert.resolved';
      alert: string;
      rule: string;
      subject: string;
      severity: string;
      threshold: number;
      system: string;
    }
  | {
      at: string;
      /** A pager paged the alert's message; who acknowledged it where, when someone did. */
      kind: 'alert.paged';
      alert: string;
      rule: string;
      subject: string;
      system: string;
      pager: string;
      /** `monitor`, or who typed `page`. */
      by: string;
      acknowledgedBy?: string;
      acknowledgedName?: string;
      acknowledgedAt?: string;
    }
  | {
      at: string;
      kind: 'look' | 'alert.handled' | 'guard.denied';
      seq: number;
      who: string;
      verb: string;
      target?: string;
      /** Why a look failed or a guard refused: the error code, worded by the builders. */
      reason?: string;
      /** `ack all <system>`: alerts acknowledged; `silence`: open alerts it silenced. */
      count?: number;
    }
  | {
      at: string;
      kind: 'requested' | 'approved' | 'approval.refused' | 'denied' | 'expired' | 'interrupted';
      seq: number;
      who: string;
      request: string;
      action: string;
      target: string;
      reason?: string;
    }
  | {
      at: string;
      kind: 'action.done' | 'action.failed';
      seq: number;
      who: string;
      action: string;
      target: string;
      outcome: string;
      /** The action's result as audited (action.done), which the timeline words per locale. */
      result?: Record<string, unknown>;
    };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/**
 * The outcome's scalars as `key value` pairs (`purged 120 · archive a-1 · undo u-1`): ids and
 * counts only; arrays and objects (job ids, payload-bearing results) are never shown.
 */
export function summarizeResult(result: unknown): string {
  if (typeof result !== 'object' || result === null) return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(result as Record<string, unknown>)) {
    if (parts.length >= 5) break;
    if (typeof value === 'number' || typeof value === 'boolean') parts.push(`${key} ${value}`);
    else if (typeof value === 'string' && value.length <= 80) parts.push(`${key} ${value}`);
  }
  return parts.join(' · ');
}

const whoOf = (e: AuditEntry) => e.actorName ?? e.actorId;

/** One audit entry as a timeline event, or undefined when it is not part of the story. */
export function eventFromAudit(e: AuditEntry): TimelineEvent | undefined {
  const p = e.params ?? {};
  const base = { at: e.at, seq: e.seq, who: whoOf(e) };
  if (e.action.startsWith('command.')) {
    const verb = e.action.slice('command.'.length);
    const target = str(e.target);
    // Each verb's descriptor says how it reads here: a look (who saw what), an alert handled, or nothing.
    const story = factsOf(verb)?.timeline;
    if (story === 'look') {
      // A typo (`status pushzio`) was not a look at anything: the timeline says what went wrong.
      const reason = e.outcome === 'ok' ? undefined : (str(e.error) ?? e.outcome);
      return { ...base, kind: 'look', verb, ...(target ? { target } : {}), ...(reason ? { reason } : {}) };
    }
    // An ack or snooze that was refused (no such alert, a bad duration) did not happen.
    if (story === 'alert.handled' && e.outcome === 'ok') {
      // `ack all zeus`: the system is the second word, the count what the command reported.
      const args = Array.isArray(p.args) ? p.args.map(String) : [];
      const result = (typeof p.result === 'object' && p.result !== null ? p.result : {}) as Record<
        string,
        unknown
      >;
      const all = verb === 'ack' && args[0]?.toLowerCase() === 'all';
      const shown = all ? (str(result.system) ?? args[1]) : verb === 'silence' ? (args[0] ?? target) : target;
      return {
        ...base,
        kind: 'alert.handled',
        verb: all ? 'ack all' : verb,
        ...(shown ? { target: shown } : {}),
        ...(typeof result.count === 'number' ? { count: result.count } : {}),
      };
    }
    return undefined;
  }
  if (e.action === 'denied') {
    const target = str(e.target);
    const reason = str(p.code);
    return {
      ...base,
      kind: 'guard.denied',
      verb: str(p.command) ?? '?',
      ...(target ? { target } : {}),
      ...(reason ? { reason } : {}),
    };
  }
  const request = str(p.request) ?? str(e.target) ?? '?';
  const action = str(p.action) ?? '?';
  const target = str(e.target) ?? '';
  const req = { ...base, request, action, target };
  switch (e.action) {
    case 'request.created':
      return { ...req, kind: 'requested' };
    case 'request.approved':
      return { ...req, kind: 'approved' };
    case 'request.approve':
      return { ...req, kind: 'approval.refused', reason: e.error ?? e.outcome };
    case 'request.denied':
      return { ...req, kind: 'denied', ...(e.error ? { reason: e.error } : {}) };
    case 'request.expired':
      return { ...req, kind: 'expired' };
    case 'request.interrupted':
      return { ...req, kind: 'interrupted' };
  }
  if (e.action.startsWith('action.')) {
    const name = e.action.slice('action.'.length);
    return e.outcome === 'failed'
      ? { ...base, kind: 'action.failed', action: name, target, outcome: e.error ?? 'failed' }
      : {
          ...base,
          kind: 'action.done',
          action: name,
          target,
          outcome: summarizeResult(p.result),
          ...(typeof p.result === 'object' && p.result !== null
            ? { result: p.result as Record<string, unknown> }
            : {}),
        };
  }
  return undefined;
}

/** An alert's firing and (when within the span) resolving. */
export function eventsFromAlert(a: Alert, since: string, until: string): TimelineEvent[] {
  const base = {
    alert: a.id,
    rule: a.rule,
    subject: a.subject,
    severity: a.severity,
    threshold: a.threshold,
    system: a.system,
  };
  const out: TimelineEvent[] = [];
  if (a.openedAt >= since && a.openedAt <= until) out.push({ ...base, at: a.openedAt, kind: 'alert.fired' });
  if (a.resolvedAt && a.resolvedAt >= since && a.resolvedAt <= until)
    out.push({ ...base, at: a.resolvedAt, kind: 'alert.resolved' });
  for (const p of a.pages ?? [])
    if (p.at >= since && p.at <= until)
      out.push({
        at: p.at,
        kind: 'alert.paged',
        alert: a.id,
        rule: a.rule,
        subject: a.subject,
        system: a.system,
        pager: p.pager,
        by: p.by,
        ...(p.acknowledgedBy ? { acknowledgedBy: p.acknowledgedBy } : {}),
        ...(p.acknowledgedName ? { acknowledgedName: p.acknowledgedName } : {}),
        ...(p.acknowledgedAt ? { acknowledgedAt: p.acknowledgedAt } : {}),
      });
  return out;
}

/** Whether an event concerns `system` (its target or alert is in it). */
export function concerns(event: TimelineEvent, system: string): boolean {
  if (event.kind === 'alert.fired' || event.kind === 'alert.resolved' || event.kind === 'alert.paged')
    return event.system === system;
  const target = 'target' in event ? event.target : undefined;
  return target === system || (target?.startsWith(`${system}/`) ?? false);
}

/** Audit events and alert events merged in time order (audit order kept for equal times). */
export function mergeEvents(
  audit: AuditEntry[],
  alerts: Alert[],
  since: string,
  until: string,
  system?: string,
): TimelineEvent[] {
  const events = [
    ...alerts.flatMap((a) => eventsFromAlert(a, since, until)),
    ...audit.flatMap((e) => {
      const ev = eventFromAudit(e);
      return ev ? [ev] : [];
    }),
  ];
  const filtered = system ? events.filter((e) => concerns(e, system)) : events;
  return filtered
    .map((e, i) => ({ e, i }))
    .sort((x, y) => (x.e.at < y.e.at ? -1 : x.e.at > y.e.at ? 1 : x.i - y.i))
    .map(({ e }) => e);
}
