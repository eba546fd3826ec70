import { PagerError } from '../paging/pager.js';
import type { Pagers } from '../paging/registry.js';
import type { OutboxItem } from '../store/store.js';
import { backoffMs, type LaneResult, type OutboxDeps } from './outbox-contract.js';
import { pageEvent } from './page-event.js';

/**
 * The outbox's pages lane (`paging:`): page events, each once its alert's earlier page events are
 * out, in a lane of their own so a phone is not held up by Slack nor Slack by a pager. `run` is
 * one pass of it, until the deadline (outbox.ts shares a pass in progress).
 */
export function pagesLane(deps: OutboxDeps, claimMs: number): { run(deadline: number): Promise<LaneResult> } {
  const { store, logger } = deps;

  /**
   * A page event: its trigger, acknowledgement or end, rendered from the message's alerts as they
   * are now. Sent again after a crash or a lapsed claim, it carries the same key: the pager folds
   * it into the page it already has.
   */
  async function deliverPage(item: OutboxItem, pagers: Pagers): Promise<'sent' | 'dropped'> {
    const iso = deps.now().toISOString();
    const name = String(item.payload.pager ?? '');
    const pager = pagers.get(name);
    const holder = await store.getAlert(item.alertId);
    if (!pager || !holder) {
      await store.completeOutbox(item.seq, iso, 'dropped', undefined, pager ? 'no alert' : 'no such pager');
      return 'dropped';
    }
    const members = holder.groupId === undefined ? [holder] : await store.listGroup(holder.groupId);
    const action = item.payload.action as 'trigger' | 'acknowledge' | 'resolve';
    const key = String(item.payload.key ?? '');
    await pager.client.send(pageEvent(action, key, members.length ? members : [holder], deps.locale));
    pagers.note(name, 'ok');
    await store.completeOutbox(item.seq, deps.now().toISOString(), 'sent');
    return 'sent';
  }

  /**
   * A pager refused the key: the page is marked refused (never tried again on its own, `page` by
   * hand tries it again), and one line goes into the alert's thread.
   */
  async function notePageRefused(item: OutboxItem, reason: string): Promise<void> {
    const pager = String(item.payload.pager ?? '');
    for (let attempt = 0; attempt < 5; attempt++) {
      const alert = await store.getAlert(item.alertId);
      if (!alert) return;
      const pages = (alert.pages ?? []).map((p) => (p.pager === pager ? { ...p, refused: reason } : p));
      const stored = await store.writeAlert({ ...alert, pages }, [
        { kind: 'thread', payload: { reason: 'page-refused', pager, error: reason } },
        { kind: 'update', payload: {} },
      ]);
      if (stored) return;
    }
  }

  /**
   * The pages lane: each page event once its alert's earlier page events are out. A 429 or 5xx is
   * tried again after its `Retry-After` (or the back-off) without holding other pages up; a
   * refusal (400/401/403) is dropped, said once in the alert's thread and on `/readyz`.
   */
  async function runPagesLane(deadline: number): Promise<LaneResult> {
    const result: LaneResult = { sent: 0, dropped: 0, paged: 0 };
    const { pagers } = deps;
    if (!pagers || pagers.all.length === 0) return result;
    for (;;) {
      if (Date.now() >= deadline) {
        result.stoppedBy = 'deadline';
        break;
      }
      const now = deps.now();
      const item = await store.nextOutbox('pages', now.toISOString());
      if (!item) break;
      const until = new Date(now.getTime() + claimMs).toISOString();
      if (!(await store.claimOutbox(item.seq, deps.owner, until, now.toISOString()))) {
        result.stoppedBy = 'claimed';
        break;
      }
      try {
        if ((await deliverPage(item, pagers)) === 'sent') {
          result.sent++;
          result.paged = (result.paged ?? 0) + 1;
        } else result.dropped++;
      } catch (error) {
        const failure =
          error instanceof PagerError
            ? error
            : new PagerError(error instanceof Error ? error.message : String(error), false);
        const fields = {
          seq: item.seq,
          alertId: item.alertId,
          pager: item.payload.pager,
          reason: failure.reason,
        };
        const at = deps.now();
        if (failure.refused) {
          logger.error(fields, 'a pager refused its key; the page is dropped and the alert’s thread says so');
          pagers.note(String(item.payload.pager ?? ''), 'refused');
          await store.completeOutbox(item.seq, at.toISOString(), 'dropped', undefined, failure.reason);
          await notePageRefused(item, failure.reason);
          result.dropped++;
          continue;
        }
        // At least a second: a `Retry-After: 0` must not make this loop ask again at once.
        const wait = Math.max(1000, failure.retryAfterMs ?? backoffMs(item.attempts));
        await store.retryOutbox(item.seq, failure.reason, new Date(at.getTime() + wait).toISOString());
        logger.warn({ ...fields, retryInMs: wait }, 'a pager did not take a page; it is tried again');
      }
    }
    return result;
  }

  return { run: runPagesLane };
}
