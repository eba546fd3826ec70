import type { Message } from '../blocks/message.js';
import { limitExpiredMessage } from '../blocks/queue-limits.js';
import type { EscalationConfig } from '../config/schema.js';
import type { Locale } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import { PagerError } from '../paging/pager.js';
import type { Pagers } from '../paging/registry.js';
import type { Alert, Silence } from '../store/alert.js';
import type { EscalationStore, OutboxItem, OutboxLane } from '../store/store.js';
import { type AlertJobs, alertJobKind } from './alert-jobs.js';
import { type AlertOwnerLookup, alertMessage, groupMessage, threadMessage } from './blocks.js';
import { pageEvent } from './page-event.js';

/** A Slack call that failed; whether to try again, and not before when. */
export class DeliveryError extends Error {
  constructor(
    readonly reason: string,
    /** Slack said no for good (channel_not_found, message_not_found, invalid_auth…). */
    readonly permanent: boolean,
    /** A 429's Retry-After, in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(reason);
    this.name = 'DeliveryError';
  }
}

/** What the outbox needs from Slack; the transport implements it with the Web API. */
export interface SlackSender {
  /** With `alertId`, the post carries it in Slack's message metadata (found by `findAlertPost`). */
  post(
    channel: string,
    message: Message,
    threadTs?: string,
    alertId?: string,
  ): Promise<{ channel: string; ts: string }>;
  /**
   * The alert's own post in `channel` since `sinceIso`, when Slack has one: a post whose answer
   * was lost (a timeout, a crash before the store heard) is found instead of posted twice.
   */
  findAlertPost?(channel: string, alertId: string, sinceIso: string): Promise<string | undefined>;
  update(channel: string, ts: string, message: Message): Promise<void>;
  /** Uploads a file into a thread (`files.uploadV2`); absent when this sender cannot. */
  upload?(channel: string, threadTs: string, file: ChartFile): Promise<void>;
}

export interface ChartFile {
  filename: string;
  title: string;
  content: Buffer;
}

export interface OutboxDeps {
  store: EscalationStore;
  /** Undefined when no bot token is configured: items wait. */
  slack?: SlackSender;
  /** `slack.incidentChannel`: where alerts go unless their system names its own channel. */
  channel?: string;
  /** A system's own alert channel (`systems[].slack.alertChannel`), when it has one. */
  channelFor?: (system: string) => string | undefined;
  /** Some system names its own alert channel (posts can go out without an incident channel). */
  hasSystemChannels?: boolean;
  settings: Pick<
    EscalationConfig,
    'clearAfterSamples' | 'escalateTo' | 'escalateAfterMinutes' | 'maxAlertsPerMessage'
  >;
  /** Who claims items (a replica, a `monitor --once` process). */
  owner: string;
  /** Who owns an alert's queue and whether its rule mentions them (`queues[].owner`, `mentionOwner`). */
  ownerOf?: AlertOwnerLookup;
  now: () => Date;
  logger: Logger;
  locale: Locale;
  /** The depth chart of an alert's queue; undefined when there is nothing to draw. */
  chart?: (alert: Alert) => Promise<ChartFile | undefined>;
  /**
   * The jobs a firing alert is about (`readAlertJobs`), each linked to its view in the message;
   * read as the message is rendered, so a post or update lists the jobs as they are then.
   */
  jobs?: (alert: Alert) => Promise<AlertJobs | undefined>;
  /** How long a message waits for its jobs before it goes out without them. Default 3 s. */
  jobsTimeoutMs?: number;
  /**
   * How long a claim holds while an item is delivered. Default 30 s: longer than one delivery can
   * take (a lookup and a post, each cut off by the Web API client's 10 s timeout), short enough
   * that a replica killed mid-call holds the outbox up for half a minute at most. A chart holds
   * twice as long: its upload is three calls and a render, and nothing waits behind it.
   */
  claimMs?: number;
  /** The pagers of `paging:`: `page` items go to them, in a lane of their own. */
  pagers?: Pagers;
}

export interface DrainResult {
  sent: number;
  dropped: number;
  /** Items still waiting. */
  pending: number;
  /** Why it stopped before the outbox was empty, if it did. */
  stoppedBy?: 'retry' | 'not-before' | 'claimed' | 'deadline' | 'no-slack';
  /** Pager events sent (counted in `sent` too). */
  paged?: number;
}

/** One lane's part of a drain. */
type LaneResult = Omit<DrainResult, 'pending'>;

/** Tries of a chart upload before it is dropped. */
const CHART_ATTEMPTS = 3;

/** Back-off after a failure with no Retry-After: 2, 4, 8… s, at most a minute. */
const backoffMs = (attempts: number) => Math.min(60_000, 2000 * 2 ** Math.min(attempts, 5));

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
  const { store, logger } = deps;
  const claimMs = deps.claimMs ?? 30_000;
  const pagers = deps.pagers;
  const settings = {
    ...deps.settings,
    ...(deps.ownerOf ? { ownerOf: deps.ownerOf } : {}),
    ...(pagers?.all.length ? { canPage: (alert: Alert) => pagers.matching(alert).length > 0 } : {}),
  };
  let messagesRun: Promise<LaneResult> | undefined;
  let chartsRun: Promise<LaneResult> | undefined;
  let pagesRun: Promise<LaneResult> | undefined;

  /**
   * The jobs of a firing alert for its message. Never holds a message up for long nor stops it: a
   * system that does not answer in `jobsTimeoutMs` (it may be the one in trouble) or fails makes
   * the message say its jobs could not be listed.
   */
  async function jobsOf(alert: Alert): Promise<AlertJobs | undefined> {
    const kind = alertJobKind(alert.metric);
    if (!deps.jobs || kind === undefined || alert.queue === undefined || alert.status !== 'firing')
      return undefined;
    const unread: AlertJobs = { kind, jobs: [], unread: true };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<AlertJobs>((resolve) => {
      timer = setTimeout(() => resolve(unread), deps.jobsTimeoutMs ?? 3000);
    });
    try {
      return await Promise.race([
        deps.jobs(alert).catch((error: unknown) => {
          logger.warn(
            { alertId: alert.id, reason: error instanceof Error ? error.message : String(error) },
            'could not list the jobs of an alert; its message says so',
          );
          return unread;
        }),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The silence an alert's message mentions, while it is in force. */
  async function silenceOf(alert: Alert): Promise<Silence | undefined> {
    if (alert.silencedBy === undefined) return undefined;
    const silence = await store.getSilence(alert.silencedBy);
    const now = deps.now().toISOString();
    return silence && silence.liftedAt === undefined && silence.expiresAt > now ? silence : undefined;
  }

  /**
   * What this process last sent as each group message (`channel|ts` → JSON): alerts of one group
   * each queue an update when they change in the same tick, and every one of those renders the
   * group as stored, so all but the first would say the same thing again.
   */
  const lastSent = new Map<string, string>();

  /** The group's message as it stands: its alerts, and the silences that hold some of them. */
  async function renderGroup(groupId: string, now: Date): Promise<{ message: Message; members: Alert[] }> {
    const members = await store.listGroup(groupId);
    const ids = [
      ...new Set(members.flatMap((a) => (a.silencedBy && a.status === 'firing' ? [a.silencedBy] : []))),
    ];
    const iso = now.toISOString();
    const silences = (await Promise.all(ids.map((id) => store.getSilence(id)))).filter(
      (s): s is Silence => s !== undefined && s.liftedAt === undefined && s.expiresAt > iso,
    );
    const listed = await Promise.all(members.map(async (a) => [a.id, await jobsOf(a)] as const));
    const jobs = new Map(listed.flatMap(([id, j]) => (j ? [[id, j] as const] : [])));
    return { message: groupMessage(members, deps.locale, now, settings, silences, jobs), members };
  }

  /** Updates a group's message unless this process already sent exactly that. */
  async function updateGroup(
    slack: SlackSender,
    channel: string,
    ts: string,
    message: Message,
  ): Promise<void> {
    const key = `${channel}|${ts}`;
    const json = JSON.stringify(message);
    if (lastSent.get(key) === json) return;
    await slack.update(channel, ts, message);
    lastSent.set(key, json);
    if (lastSent.size > 1000) lastSent.delete(lastSent.keys().next().value as string);
  }

  /**
   * A grouped alert's post: it joins its group's message (an update), or posts it when the group
   * has none yet. Its `channel`/`messageTs` become the group's, so its thread replies and charts
   * go into the group's thread.
   */
  async function deliverGroupPost(item: OutboxItem, alert: Alert & { groupId: string }, slack: SlackSender) {
    const now = deps.now();
    const iso = now.toISOString();
    const { message, members } = await renderGroup(alert.groupId, now);
    const host = members.find((m) => m.messageTs && m.channel);
    if (host?.messageTs && host.channel) {
      await updateGroup(slack, host.channel, host.messageTs, message);
      await store.completeOutbox(item.seq, iso, 'sent', {
        alertId: alert.id,
        channel: host.channel,
        ts: host.messageTs,
      });
      return 'sent' as const;
    }
    const channel = deps.channelFor?.(alert.system) ?? deps.channel;
    if (!channel) {
      await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no channel');
      return 'dropped' as const;
    }
    // As for a single alert: a post whose answer was lost is found by the group's id.
    if ((item.attempts > 0 || item.claimedBefore) && slack.findAlertPost) {
      const found = await findEarlierPost(slack, channel, alert.groupId, item.createdAt);
      if (found) {
        await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, channel, ts: found });
        return 'sent' as const;
      }
    }
    const posted = await slack.post(channel, message, undefined, alert.groupId);
    lastSent.set(`${posted.channel}|${posted.ts}`, JSON.stringify(message));
    await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, ...posted });
    return 'sent' as const;
  }

  /** A notice to a system's alert channel (a limit the monitor lifted), rendered now. */
  async function deliverNotice(item: OutboxItem, slack: SlackSender): Promise<'sent' | 'dropped'> {
    const iso = deps.now().toISOString();
    const channel = deps.channelFor?.(String(item.payload.system ?? '')) ?? deps.channel;
    if (!channel) {
      await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no channel');
      return 'dropped';
    }
    await slack.post(channel, limitExpiredMessage(item.payload, deps.locale));
    await store.completeOutbox(item.seq, iso, 'sent');
    return 'sent';
  }

  async function deliver(item: OutboxItem, slack: SlackSender): Promise<'sent' | 'dropped'> {
    if (item.kind === 'notice') return await deliverNotice(item, slack);
    const alert = await store.getAlert(item.alertId);
    if (!alert) return 'dropped';
    const now = deps.now();
    const iso = now.toISOString();
    if (item.kind === 'post' && alert.groupId !== undefined && !alert.messageTs)
      return await deliverGroupPost(item, { ...alert, groupId: alert.groupId }, slack);
    if (item.kind === 'update' && alert.groupId !== undefined && alert.messageTs && alert.channel) {
      const { message } = await renderGroup(alert.groupId, now);
      await updateGroup(slack, alert.channel, alert.messageTs, message);
      await store.completeOutbox(item.seq, iso, 'sent');
      return 'sent';
    }
    if (item.kind === 'post') {
      const channel = deps.channelFor?.(alert.system) ?? deps.channel;
      if (!channel) {
        logger.warn(
          { alertId: alert.id, system: alert.system },
          'no channel for this system’s alerts; not posted',
        );
        await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no channel');
        return 'dropped';
      }
      // Delivered before (the claim lapsed after Slack answered): never a second message.
      if (alert.messageTs) {
        await store.completeOutbox(item.seq, iso, 'sent');
        return 'sent';
      }
      // Tried before without a stored answer: Slack may have posted it all the same (the answer
      // was lost, or the process died before writing it down). Look before posting again.
      if ((item.attempts > 0 || item.claimedBefore) && slack.findAlertPost) {
        const found = await findEarlierPost(slack, channel, alert.id, item.createdAt);
        if (found) {
          logger.info({ alertId: alert.id, ts: found }, 'the alert was posted before; adopting that message');
          await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, channel, ts: found });
          return 'sent';
        }
      }
      const posted = await slack.post(
        channel,
        alertMessage(alert, deps.locale, now, settings, await silenceOf(alert), await jobsOf(alert)),
        undefined,
        alert.id,
      );
      await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, ...posted });
      return 'sent';
    }
    if (!alert.messageTs || !alert.channel) {
      // Its post was given up for good: there is no message to update or reply to.
      await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no message to update');
      return 'dropped';
    }
    if (item.kind === 'chart') {
      // Rendered at delivery like posts: a chart sent late shows the samples up to then.
      const file = slack.upload && deps.chart ? await deps.chart(alert) : undefined;
      if (!file || !slack.upload) {
        await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no chart to send');
        return 'dropped';
      }
      await slack.upload(alert.channel, alert.messageTs, file);
      await store.completeOutbox(item.seq, iso, 'sent');
      return 'sent';
    }
    if (item.kind === 'update') {
      await slack.update(
        alert.channel,
        alert.messageTs,
        alertMessage(alert, deps.locale, now, settings, await silenceOf(alert), await jobsOf(alert)),
      );
    } else {
      await slack.post(
        alert.channel,
        threadMessage(alert, item.payload, deps.locale, deps.settings),
        alert.messageTs,
      );
    }
    await store.completeOutbox(item.seq, iso, 'sent');
    return 'sent';
  }

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

  /** The lookup, or undefined when it cannot be made (then the post is sent: late beats lost). */
  async function findEarlierPost(
    slack: SlackSender,
    channel: string,
    alertId: string,
    sinceIso: string,
  ): Promise<string | undefined> {
    try {
      return await slack.findAlertPost!(channel, alertId, sinceIso);
    } catch (error) {
      logger.warn(
        { alertId, reason: error instanceof Error ? error.message : String(error) },
        'could not look for an earlier post of the alert; posting it',
      );
      return undefined;
    }
  }

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
          result.dropped++;
          continue;
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
          // Not due again until its back-off is over, so the next pick is another chart, if any.
          logger.warn(fields, 'Slack did not take an alert chart; it is tried again on its own');
          continue;
        }
        logger.warn(fields, 'Slack did not take an alert message; it stays in the outbox, in order');
        result.stoppedBy = 'retry';
        break;
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
    pagesRun ??= runPagesLane(deadline).finally(() => {
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
