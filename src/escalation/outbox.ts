import type { Pagers } from '../paging/registry.js';
import type { Alert } from '../store/alert.js';
import type { OutboxItem, OutboxLane } from '../store/store.js';
import {
  backoffMs,
  DeliveryError,
  type DrainResult,
  type LaneResult,
  type MessageSettings,
  type OutboxDeps,
} from './outbox-contract.js';
import { messageDelivery } from './outbox-messages.js';
import { pagesLane } from './outbox-pages.js';

/** Tries of a chart upload before it is dropped. */
const CHART_ATTEMPTS = 3;

/**
 * A delivery that threw: dropped when Slack refused it for good (or a chart ran out of tries),
 * otherwise put back with its back-off. A message then stops its lane (order); a chart does not
 * (not due again until its back-off is over, so the lane's next pick is another chart, if any).
 */
async function noteFailure(
  deps: OutboxDeps,
  lane: OutboxLane,
  item: OutboxItem,
  error: unknown,
): Promise<'dropped' | 'retry' | 'stop'> {
  const { store, logger } = deps;
  let failure =
    error instanceof DeliveryError
      ? error
      : new DeliveryError(error instanceof Error ? error.message : String(error), false);
  // A chart is a courtesy: after a few tries it is given up.
  if (item.kind === 'chart' && !failure.permanent && item.attempts + 1 >= CHART_ATTEMPTS)
    failure = new DeliveryError(`${failure.reason} (chart given up)`, true);
  const at = deps.now();
  if (failure.permanent) {
    logger.error(
      { seq: item.seq, alertId: item.alertId, kind: item.kind, reason: failure.reason },
      'Slack refused an alert message for good; dropped from the outbox',
    );
    await store.completeOutbox(item.seq, at.toISOString(), 'dropped', undefined, failure.reason);
    return 'dropped';
  }
  const wait = failure.retryAfterMs ?? backoffMs(item.attempts);
  await store.retryOutbox(item.seq, failure.reason, new Date(at.getTime() + wait).toISOString());
  const fields = {
    seq: item.seq,
    alertId: item.alertId,
    kind: item.kind,
    reason: failure.reason,
    retryInMs: wait,
  };
  if (lane === 'charts') {
    logger.warn(fields, 'Slack did not take an alert chart; it is tried again on its own');
    return 'retry';
  }
  logger.warn(fields, 'Slack did not take an alert message; it stays in the outbox, in order');
  return 'stop';
}

/**
 * Delivers the outbox in two lanes. Messages (posts, updates, thread replies) go strictly in
 * order: the oldest first, and nothing after an item that failed until it goes through (a thread
 * reply must not land before its post, an update before the post it updates). Charts go on their
 * own, each once its alert's earlier messages are out: an upload that fails, is rate limited or
 * hangs is retried after its back-off without holding up any alert message, and a chart refused
 * for good (or tried `CHART_ATTEMPTS` times) is dropped. Posts and updates render the alert as it
 * is when sent, so a message delivered late says what is true then. One run of each lane at a
 * time per process (`drain` shares them).
 */
export function createOutbox(deps: OutboxDeps) {
  const { store } = deps;
  const claimMs = deps.claimMs ?? 30_000;
  const pagers: Pagers | undefined = deps.pagers;
  const settings: MessageSettings = {
    ...deps.settings,
    ...(deps.ownerOf ? { ownerOf: deps.ownerOf } : {}),
    ...(pagers?.all.length ? { canPage: (alert: Alert) => pagers.matching(alert).length > 0 } : {}),
  };
  const deliver = messageDelivery(deps, settings);
  const pages = pagesLane(deps, claimMs);
  let messagesRun: Promise<LaneResult> | undefined;
  let chartsRun: Promise<LaneResult> | undefined;
  let pagesRun: Promise<LaneResult> | undefined;

  /**
   * One lane until it is empty, an item must wait, or the deadline. The messages lane stops at the
   * first failure (order); the charts lane notes it on the chart and goes on to the next one due.
   */
  async function runLane(lane: OutboxLane, deadline: number): Promise<LaneResult> {
    const result: LaneResult = { sent: 0, dropped: 0 };
    const { slack } = deps;
    // Where posts go: the incident channel, or a system's own; with neither, items wait.
    const anyChannel = deps.channel !== undefined || (deps.hasSystemChannels ?? false);
    for (;;) {
      if (!slack || !anyChannel) {
        result.stoppedBy = 'no-slack';
        break;
      }
      if (Date.now() >= deadline) {
        result.stoppedBy = 'deadline';
        break;
      }
      const now = deps.now();
      const item = await store.nextOutbox(lane, now.toISOString());
      if (!item) break;
      if (Date.parse(item.notBefore) > now.getTime()) {
        result.stoppedBy = 'not-before';
        break;
      }
      const claimed = await store.claimOutbox(
        item.seq,
        deps.owner,
        new Date(now.getTime() + (lane === 'charts' ? 2 * claimMs : claimMs)).toISOString(),
        now.toISOString(),
      );
      if (!claimed) {
        result.stoppedBy = 'claimed';
        break;
      }
      try {
        const outcome = await deliver(item, slack);
        if (outcome === 'sent') result.sent++;
        else result.dropped++;
      } catch (error) {
        const after = await noteFailure(deps, lane, item, error);
        if (after === 'dropped') result.dropped++;
        if (after === 'stop') {
          result.stoppedBy = 'retry';
          break;
        }
      }
    }
    return result;
  }

  const laneStarter = (lane: OutboxLane) => (deadline: number) => {
    const current = lane === 'messages' ? messagesRun : chartsRun;
    if (current) return current;
    const started = runLane(lane, deadline).finally(() => {
      if (lane === 'messages') messagesRun = undefined;
      else chartsRun = undefined;
    });
    if (lane === 'messages') messagesRun = started;
    else chartsRun = started;
    return started;
  };
  const startMessages = laneStarter('messages');
  const startCharts = laneStarter('charts');
  const startPages = (deadline: number) => {
    pagesRun ??= pages.run(deadline).finally(() => {
      pagesRun = undefined;
    });
    return pagesRun;
  };

  return {
    /**
     * Sends what is due, until the outbox is empty, an item must wait, or `deadlineMs` has passed.
     * A drain already running is shared, not doubled.
     */
    async drain(deadlineMs = 20_000): Promise<DrainResult> {
      const deadline = Date.now() + deadlineMs;
      const messages = startMessages(deadline);
      // Charts start once the messages due now are out (a chart follows its post), and a charts
      // run already going on (an upload hanging) is joined: it picks up new charts as it loops.
      const charts = messages.then(
        () => startCharts(deadline),
        () => startCharts(deadline),
      );
      // Pages wait for nobody: a phone is not held up by Slack being slow, nor Slack by a pager.
      const [m, c, p] = await Promise.all([messages, charts, startPages(deadline)]);
      return {
        sent: m.sent + c.sent + p.sent,
        dropped: m.dropped + c.dropped + p.dropped,
        pending: await store.pendingOutbox(),
        ...((m.stoppedBy ?? c.stoppedBy) ? { stoppedBy: m.stoppedBy ?? c.stoppedBy } : {}),
        ...(p.paged ? { paged: p.paged } : {}),
      };
    },
    /** Resolves when the lanes in progress, if any, are over. */
    async idle(): Promise<void> {
      await messagesRun?.catch(() => undefined);
      await chartsRun?.catch(() => undefined);
      await pagesRun?.catch(() => undefined);
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
