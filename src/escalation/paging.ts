import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { PagerHealth } from '../paging/pager.js';
import {
  notePagerDutyAnswer,
  type PageAction,
  type PageWrite,
  planPageNow,
  planPages,
  subjectOfPageKey,
} from '../paging/plan.js';
import type { Pagers } from '../paging/registry.js';
import type { Alert } from '../store/alert.js';
import type { EscalationStore, OutboxInput } from '../store/store.js';
import { ackAlert } from './lifecycle.js';

/** Writes tried again from fresh reads when an alert changed meanwhile. */
const ATTEMPTS = 5;

const pageItems = (actions: readonly PageAction[]): OutboxInput[] =>
  actions.map((a) => ({ kind: 'page', payload: { pager: a.pager, action: a.action, key: a.key } }));

/** What the PagerDuty webhook changed (`found: false`: no alert of queue-ops has that key). */
export interface PagerAnswerOutcome {
  found: boolean;
  /** Something was written: the audit records it; a replay changes nothing and writes nothing. */
  changed: boolean;
  alerts: Alert[];
}

/** What paging needs from the composition root. */
interface PagingDeps {
  store: EscalationStore;
  pagers: Pagers;
  now: () => Date;
  logger?: Logger;
}

/** What PagerDuty's webhook says a person did to a page. */
interface PagerDutyAnswer {
  key: string;
  kind: 'acknowledge' | 'resolve';
  userId: string;
  name: string;
}

/** Writes PagerDuty's answer on the page's alerts, read again when one changed meanwhile. */
async function answerFromPagerDuty(deps: PagingDeps, answer: PagerDutyAnswer): Promise<PagerAnswerOutcome> {
  const { store, pagers } = deps;
  const subject = subjectOfPageKey(answer.key);
  if (!subject) return { found: false, changed: false, alerts: [] };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const members =
      'groupId' in subject
        ? await store.listGroup(subject.groupId)
        : ((a) => (a ? [a] : []))(await store.getAlert(subject.alertId));
    if (members.length === 0) return { found: false, changed: false, alerts: [] };
    const now = deps.now();
    const pageWrites = new Map(
      notePagerDutyAnswer(members, pagers.pagerDuty, { ...answer, at: now.toISOString() }).map((w) => [
        w.alert.id,
        w.alert,
      ]),
    );
    const changed: Alert[] = [];
    let lost = false;
    for (const member of members) {
      let next = pageWrites.get(member.id);
      pageWrites.delete(member.id);
      if (answer.kind === 'acknowledge') {
        const step = ackAlert(next ?? member, `pagerduty:${answer.userId}`, now.getTime());
        if (step.changed && step.alert) next = step.alert;
      }
      if (!next) continue;
      const stored = await store.writeAlert(next, [{ kind: 'update', payload: {} }]);
      if (!stored) {
        lost = true;
        break;
      }
      changed.push(stored);
    }
    if (lost) continue;
    return { found: true, changed: changed.length > 0, alerts: changed.length ? changed : members };
  }
  throw new OpsError(ErrorCode.StoreUnavailable, { reason: messages().escalation.keptChanging });
}

/**
 * Pages over the store: each write of a page (its trigger, acknowledgement, end) goes with the
 * outbox item that sends it, conditional on the alert's version, so a page is queued exactly once
 * however many replicas decide it, and the outbox's claim sends it once (a resend after a crash
 * carries the same key, which the pager folds into the same incident).
 */
export function createPaging(deps: PagingDeps) {
  const { store, pagers } = deps;

  async function membersOf(alert: Alert): Promise<Alert[]> {
    if (alert.groupId === undefined) return [alert];
    const members = await store.listGroup(alert.groupId);
    return members.length ? members : [alert];
  }

  /** Writes each page change; false when an alert changed meanwhile (the caller reads again). */
  async function write(writes: readonly PageWrite[], extra: OutboxInput[] = []): Promise<boolean> {
    for (const w of writes) {
      const stored = await store.writeAlert(w.alert, [...pageItems(w.actions), ...extra]);
      if (!stored) return false;
    }
    return true;
  }

  /** Brings one message's pages in step with its alerts; true when it wrote something. */
  async function settleMessage(anyMember: Alert): Promise<boolean> {
    // An alert of its own is decided as given (the monitor and the alert service pass it as just
    // stored); a group is read whole. A write that finds it changed reads it again.
    let members: Alert[] | undefined = anyMember.groupId === undefined ? [anyMember] : undefined;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      members ??= await membersOf((await store.getAlert(anyMember.id)) ?? anyMember);
      const writes = planPages(members, pagers.all, deps.now().getTime());
      members = undefined;
      if (writes.length === 0) return false;
      // The message says who was paged and who acknowledged where: it is updated with the page.
      if (await write(writes, [{ kind: 'update', payload: {} }])) return true;
    }
    deps.logger?.warn({ alertId: anyMember.id }, 'alert kept changing; its page is settled next tick');
    return false;
  }

  return {
    /** Some pager is configured. */
    enabled: pagers.all.length > 0,

    /**
     * What `/readyz` says of each pager: `refused` when this process saw it refuse its key since
     * it last took one, or when an open alert's page was refused (seen by any replica: the page
     * says so in the store), `ok` otherwise. Empty without pagers.
     */
    async health(): Promise<Record<string, PagerHealth>> {
      const health = pagers.health();
      if (pagers.all.length === 0) return health;
      for (const alert of await store.listAlerts({ status: 'firing' }))
        for (const page of alert.pages ?? [])
          if (page.refused !== undefined && Object.hasOwn(health, page.pager)) health[page.pager] = 'refused';
      return health;
    },

    /**
     * An alert of its own that resolves: its pages resolve in the same write (no moment where the
     * alert is resolved and its page is not yet queued to be). A group's pages follow its last
     * alert in `settle`.
     */
    resolvedWithPages(alert: Alert): { alert: Alert; outbox: OutboxInput[] } {
      if (alert.status !== 'resolved' || alert.groupId !== undefined || !alert.pages?.length)
        return { alert, outbox: [] };
      const [write] = planPages([alert], pagers.all, deps.now().getTime());
      return write ? { alert: write.alert, outbox: pageItems(write.actions) } : { alert, outbox: [] };
    },

    /**
     * The messages of these alerts, each once: pages due are triggered, acknowledged ones
     * acknowledged, resolved ones resolved. Run by the monitor every tick and after every ack.
     */
    async settle(alerts: readonly Alert[]): Promise<number> {
      if (pagers.all.length === 0) return 0;
      const seen = new Set<string>();
      let written = 0;
      for (const alert of alerts) {
        const message = alert.groupId ?? alert.id;
        if (seen.has(message)) continue;
        seen.add(message);
        if (await settleMessage(alert)) written++;
      }
      return written;
    },

    /** `page <alert-id> [pager]`: pages now. Unknown alert, unknown pager, no pager matching: coded errors. */
    async pageNow(id: string, pagerName: string | undefined, by: string) {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const alert = await store.getAlert(id);
        if (!alert) throw new OpsError(ErrorCode.UnknownAlert, { id });
        if (alert.status !== 'firing') throw new OpsError(ErrorCode.AlertNotFiring, { id, page: true });
        const names = pagers.all.map((p) => p.name);
        // With no pager configured, a named one is not a typo: the answer says how to add one.
        if (names.length === 0) throw new OpsError(ErrorCode.NoPager, { id, valid: names });
        let chosen = pagers.matching(alert);
        if (pagerName !== undefined) {
          const named = pagers.get(pagerName);
          if (!named) throw new OpsError(ErrorCode.UnknownPager, { pager: pagerName, valid: names });
          chosen = [named];
        }
        if (chosen.length === 0) throw new OpsError(ErrorCode.NoPager, { id, valid: names });
        const plan = planPageNow(await membersOf(alert), alert, chosen, by, deps.now().getTime());
        if (await write(plan.writes, plan.writes.length ? [{ kind: 'update', payload: {} }] : []))
          return { alert: (await store.getAlert(id)) ?? alert, paged: plan.paged, already: plan.already };
      }
      throw new OpsError(ErrorCode.StoreUnavailable, { reason: messages().escalation.keptChanging });
    },

    /**
     * PagerDuty's webhook: `acknowledge` acknowledges every firing alert of the page's message
     * (`ackedBy: pagerduty:<user id>`; reminders and escalation stop); `resolve` records that a
     * person resolved the page, the alerts resolve when the monitor sees them clear. Either way
     * the message is updated. Idempotent: a replay finds it done and writes nothing.
     */
    answerFromPagerDuty: (answer: PagerDutyAnswer): Promise<PagerAnswerOutcome> =>
      answerFromPagerDuty(deps, answer),
  };
}

export type Paging = ReturnType<typeof createPaging>;
