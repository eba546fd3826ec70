import type { PagerConfig } from '../config/schema.js';
import type { Alert, AlertPage } from '../store/alert.js';

/** What deciding a page needs of a pager's config. */
export type PagerRule = Pick<PagerConfig, 'name' | 'type' | 'match' | 'afterMinutes'>;

/** One event to send: the outbox item a page's write carries. */
export interface PageAction {
  pager: string;
  action: AlertPage['sent'];
  key: string;
}

/** A write a page calls for: the alert that keeps the page, as it should be stored, and what to send. */
export interface PageWrite {
  alert: Alert;
  actions: PageAction[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The page key of an alert's message: its group's (a grouped message is one page), else its own.
 * Stable while the group lives, so a resend, or a second replica's, is the same page.
 */
export function pageKeyOf(alert: Pick<Alert, 'id' | 'groupId'>): string {
  return `queue-ops-${alert.groupId ?? alert.id}`;
}

/** The alert or group a page key names (`queue-ops-a-…` / `queue-ops-g-…`); undefined otherwise. */
export function subjectOfPageKey(key: string): { alertId: string } | { groupId: string } | undefined {
  const match = /^queue-ops-([ag]-[0-9a-f]{1,16})$/.exec(key);
  if (!match) return undefined;
  const id = match[1]!;
  return id.startsWith('g-') ? { groupId: id } : { alertId: id };
}

/** Each list given in `match` contains the alert's value; no `match`: every alert. */
export function pagerMatches(
  pager: Pick<PagerRule, 'match'>,
  alert: Pick<Alert, 'severity' | 'system' | 'rule'>,
) {
  const m = pager.match;
  if (!m) return true;
  return (
    (m.severities === undefined || m.severities.includes(alert.severity)) &&
    (m.systems === undefined || m.systems.includes(alert.system)) &&
    (m.rules === undefined || m.rules.includes(alert.rule))
  );
}

/** Acknowledged, snoozed, silenced, or held back by a silence: nobody is to be paged for it. */
export function isQuiet(alert: Alert, now: number): boolean {
  return (
    alert.ackedBy !== undefined ||
    (alert.snoozedUntil !== undefined && Date.parse(alert.snoozedUntil) > now) ||
    alert.silencedBy !== undefined ||
    alert.postHeld === true
  );
}

/** A message's page by one pager, and the alert that keeps it. */
export function findPage(
  members: readonly Alert[],
  pager: string,
): { holder: Alert; page: AlertPage } | undefined {
  for (const holder of members) {
    const page = holder.pages?.find((p) => p.pager === pager);
    if (page) return { holder, page };
  }
  return undefined;
}

/** Every page of a message (a group's pages are kept on one of its alerts). */
export function pagesOf(members: readonly Alert[]): AlertPage[] {
  return members.flatMap((a) => a.pages ?? []);
}

/**
 * Where a page should be, from its message's alerts: resolved once all of them are, acknowledged
 * once every one still firing is, triggered otherwise.
 */
export function wantedAction(members: readonly Alert[]): AlertPage['sent'] {
  const firing = members.filter((a) => a.status === 'firing');
  if (firing.length === 0) return 'resolve';
  return firing.every((a) => a.ackedBy !== undefined) ? 'acknowledge' : 'trigger';
}

/** The moves a page makes: forward, and from resolved back to triggered when its message fires again. */
function moves(from: AlertPage['sent'], to: AlertPage['sent']): boolean {
  if (from === to) return false;
  if (from === 'trigger') return true;
  if (from === 'acknowledge') return to === 'resolve';
  return to === 'trigger';
}

/** Gathers page changes per alert that keeps them, in the members' order. */
function collect() {
  const writes = new Map<string, PageWrite>();
  return {
    change(holder: Alert, page: AlertPage, action: PageAction | undefined) {
      const current = writes.get(holder.id) ?? { alert: holder, actions: [] };
      // In place: a message's pages keep the order they were triggered in.
      const pages = current.alert.pages ?? [];
      const known = pages.some((p) => p.pager === page.pager);
      current.alert = {
        ...current.alert,
        pages: known ? pages.map((p) => (p.pager === page.pager ? page : p)) : [...pages, page],
      };
      if (action) current.actions.push(action);
      writes.set(holder.id, current);
    },
    done: () => [...writes.values()],
  };
}

/**
 * What one message's pages call for now (the monitor's every tick, and after an ack):
 * - a pager that matches a firing alert of the message, open `afterMinutes` and not acknowledged,
 *   snoozed or silenced, and has not paged it: a trigger, kept on that alert;
 * - a page whose message has since been acknowledged in full, or has resolved: its acknowledgement
 *   or end; a resolved page whose message fires again, unacknowledged: a trigger again.
 * A page a pager refused is left alone (`page` by hand tries it again).
 */
export function planPages(members: readonly Alert[], pagers: readonly PagerRule[], now: number): PageWrite[] {
  const out = collect();
  const wanted = wantedAction(members);
  for (const pager of pagers) {
    const found = findPage(members, pager.name);
    if (!found) {
      const due = members.find(
        (a) =>
          a.status === 'firing' &&
          !isQuiet(a, now) &&
          pagerMatches(pager, a) &&
          now - Date.parse(a.openedAt) >= pager.afterMinutes * 60_000,
      );
      if (!due) continue;
      const key = pageKeyOf(due);
      out.change(
        due,
        { pager: pager.name, key, at: iso(now), by: 'monitor', sent: 'trigger' },
        {
          pager: pager.name,
          action: 'trigger',
          key,
        },
      );
      continue;
    }
    const { holder, page } = found;
    if (page.refused !== undefined || !moves(page.sent, wanted)) continue;
    if (wanted === 'trigger' && page.sent === 'resolve') {
      // A person closed the page while the alert still fires: they know; it is not paged again.
      if (page.resolvedBy !== undefined) continue;
      const again = members.some((a) => a.status === 'firing' && !isQuiet(a, now) && pagerMatches(pager, a));
      if (!again) continue;
      const fresh: AlertPage = {
        pager: page.pager,
        key: page.key,
        at: iso(now),
        by: 'monitor',
        sent: 'trigger',
      };
      out.change(holder, fresh, { pager: page.pager, action: 'trigger', key: page.key });
      continue;
    }
    const acked =
      wanted === 'acknowledge' && page.acknowledgedBy === undefined ? ackedLast(members) : undefined;
    const next: AlertPage = {
      ...page,
      sent: wanted,
      ...(acked ? { acknowledgedBy: acked.ackedBy, acknowledgedAt: acked.ackedAt ?? iso(now) } : {}),
    };
    out.change(holder, next, { pager: page.pager, action: wanted, key: page.key });
  }
  return out.done();
}

/** The firing alert acknowledged last: whose acknowledgement acknowledged the page. */
function ackedLast(members: readonly Alert[]): { ackedBy: string; ackedAt?: string } | undefined {
  const acked = members
    .filter((a) => a.status === 'firing' && a.ackedBy !== undefined)
    .sort((a, b) => (a.ackedAt ?? '').localeCompare(b.ackedAt ?? ''));
  const last = acked.at(-1);
  return last?.ackedBy === undefined
    ? undefined
    : { ackedBy: last.ackedBy, ...(last.ackedAt ? { ackedAt: last.ackedAt } : {}) };
}

/**
 * `page <alert-id> [pager]`, by hand: triggers the pagers named (their page of the message is
 * sent now, whatever `afterMinutes` says; a refused page is tried again). Pagers that already
 * have an open page of the message are left as they are.
 */
export function planPageNow(
  members: readonly Alert[],
  target: Alert,
  pagers: readonly PagerRule[],
  by: string,
  now: number,
): { writes: PageWrite[]; paged: string[]; already: string[] } {
  const out = collect();
  const paged: string[] = [];
  const already: string[] = [];
  for (const pager of pagers) {
    const found = findPage(members, pager.name);
    if (found && found.page.refused === undefined && found.page.sent !== 'resolve') {
      already.push(pager.name);
      continue;
    }
    const holder = found?.holder ?? target;
    const key = found?.page.key ?? pageKeyOf(target);
    out.change(
      holder,
      { pager: pager.name, key, at: iso(now), by, sent: 'trigger' },
      {
        pager: pager.name,
        action: 'trigger',
        key,
      },
    );
    paged.push(pager.name);
  }
  return { writes: out.done(), paged, already };
}

/**
 * An acknowledgement or end that came from PagerDuty (its webhook): the PagerDuty pages of the
 * message record who, and are not sent back (`sent` moves with them). Undefined fields: no change.
 */
export function notePagerDutyAnswer(
  members: readonly Alert[],
  pagerDutyPagers: ReadonlySet<string>,
  answer: { kind: 'acknowledge' | 'resolve'; userId: string; name: string; at: string },
): PageWrite[] {
  const out = collect();
  for (const holder of members)
    for (const page of holder.pages ?? []) {
      if (!pagerDutyPagers.has(page.pager)) continue;
      const by = `pagerduty:${answer.userId}`;
      if (answer.kind === 'acknowledge') {
        if (page.acknowledgedBy !== undefined) continue;
        out.change(
          holder,
          {
            ...page,
            acknowledgedBy: by,
            acknowledgedName: answer.name,
            acknowledgedAt: answer.at,
            sent: page.sent === 'trigger' ? 'acknowledge' : page.sent,
          },
          undefined,
        );
      } else {
        if (page.resolvedBy !== undefined) continue;
        out.change(
          holder,
          { ...page, resolvedBy: by, resolvedName: answer.name, resolvedAt: answer.at, sent: 'resolve' },
          undefined,
        );
      }
    }
  return out.done();
}
