import type { Message } from '../blocks/message.js';
import { limitExpiredMessage } from '../blocks/queue-limits.js';
import type { Logger } from '../lib/logger.js';
import type { Alert, Silence } from '../store/alert.js';
import type { OutboxItem } from '../store/store.js';
import { type AlertJobs, alertJobKind } from './alert-jobs.js';
import { alertMessage, groupMessage, threadMessage } from './blocks.js';
import type { MessageSettings, OutboxDeps, SlackSender } from './outbox-contract.js';

/** What an item's delivery came to: sent (or found sent before), or dropped for good. */
type Delivered = 'sent' | 'dropped';

/**
 * The messages of the outbox as they are when sent: an alert's or a group's, with the jobs it is
 * about and the silence that holds it. Rendered at delivery, so a message delivered late says
 * what is true then.
 */
function messageRendering(deps: OutboxDeps, settings: MessageSettings) {
  const { store, logger } = deps;

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

  return {
    /** A single alert's message, as it stands. */
    async alert(alert: Alert, now: Date): Promise<Message> {
      return alertMessage(alert, deps.locale, now, settings, await silenceOf(alert), await jobsOf(alert));
    },

    /** The group's message as it stands: its alerts, and the silences that hold some of them. */
    async group(groupId: string, now: Date): Promise<{ message: Message; members: Alert[] }> {
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
    },

    /** Updates a group's message unless this process already sent exactly that. */
    async updateGroup(slack: SlackSender, channel: string, ts: string, message: Message): Promise<void> {
      const key = `${channel}|${ts}`;
      const json = JSON.stringify(message);
      if (lastSent.get(key) === json) return;
      await slack.update(channel, ts, message);
      lastSent.set(key, json);
      if (lastSent.size > 1000) lastSent.delete(lastSent.keys().next().value as string);
    },

    /** A group message this process just posted, so an update saying the same is not sent. */
    posted(channel: string, ts: string, message: Message): void {
      lastSent.set(`${channel}|${ts}`, JSON.stringify(message));
    },
  };
}

/** The lookup, or undefined when it cannot be made (then the post is sent: late beats lost). */
async function findEarlierPost(
  logger: Logger,
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

/** Tried before without a stored answer: Slack may have posted it all the same. */
const triedBefore = (item: OutboxItem, slack: SlackSender) =>
  (item.attempts > 0 || item.claimedBefore) && slack.findAlertPost !== undefined;

/** A notice to a system's alert channel (a limit the monitor lifted), rendered now. */
async function deliverNotice(deps: OutboxDeps, item: OutboxItem, slack: SlackSender): Promise<Delivered> {
  const iso = deps.now().toISOString();
  const channel = deps.channelFor?.(String(item.payload.system ?? '')) ?? deps.channel;
  if (!channel) {
    await deps.store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no channel');
    return 'dropped';
  }
  await slack.post(channel, limitExpiredMessage(item.payload, deps.locale));
  await deps.store.completeOutbox(item.seq, iso, 'sent');
  return 'sent';
}

/**
 * How one item of the messages or charts lane reaches Slack: a post (joining its group's message,
 * or the alert's own, looked for first when an earlier try may have gone through), an update, a
 * thread reply, a chart upload, or a notice. Stores the outcome with the item.
 */
export function messageDelivery(deps: OutboxDeps, settings: MessageSettings) {
  const { store, logger } = deps;
  const render = messageRendering(deps, settings);

  /**
   * A grouped alert's post: it joins its group's message (an update), or posts it when the group
   * has none yet. Its `channel`/`messageTs` become the group's, so its thread replies and charts
   * go into the group's thread.
   */
  async function deliverGroupPost(
    item: OutboxItem,
    alert: Alert & { groupId: string },
    slack: SlackSender,
  ): Promise<Delivered> {
    const now = deps.now();
    const iso = now.toISOString();
    const { message, members } = await render.group(alert.groupId, now);
    const host = members.find((m) => m.messageTs && m.channel);
    if (host?.messageTs && host.channel) {
      await render.updateGroup(slack, host.channel, host.messageTs, message);
      await store.completeOutbox(item.seq, iso, 'sent', {
        alertId: alert.id,
        channel: host.channel,
        ts: host.messageTs,
      });
      return 'sent';
    }
    const channel = deps.channelFor?.(alert.system) ?? deps.channel;
    if (!channel) {
      await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no channel');
      return 'dropped';
    }
    // As for a single alert: a post whose answer was lost is found by the group's id.
    if (triedBefore(item, slack)) {
      const found = await findEarlierPost(logger, slack, channel, alert.groupId, item.createdAt);
      if (found) {
        await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, channel, ts: found });
        return 'sent';
      }
    }
    const posted = await slack.post(channel, message, undefined, alert.groupId);
    render.posted(posted.channel, posted.ts, message);
    await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, ...posted });
    return 'sent';
  }

  /** A single alert's post, in its system's channel or the incident channel. */
  async function deliverAlertPost(
    item: OutboxItem,
    alert: Alert,
    slack: SlackSender,
    now: Date,
  ): Promise<Delivered> {
    const iso = now.toISOString();
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
    if (triedBefore(item, slack)) {
      const found = await findEarlierPost(logger, slack, channel, alert.id, item.createdAt);
      if (found) {
        logger.info({ alertId: alert.id, ts: found }, 'the alert was posted before; adopting that message');
        await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, channel, ts: found });
        return 'sent';
      }
    }
    const posted = await slack.post(channel, await render.alert(alert, now), undefined, alert.id);
    await store.completeOutbox(item.seq, iso, 'sent', { alertId: alert.id, ...posted });
    return 'sent';
  }

  /** What follows a post: its chart, its update, a reply in its thread. */
  async function deliverToMessage(
    item: OutboxItem,
    alert: Alert & { channel: string; messageTs: string },
    slack: SlackSender,
    now: Date,
  ): Promise<Delivered> {
    const iso = now.toISOString();
    if (item.kind === 'chart') {
      // Rendered at delivery like posts: a chart sent late shows the samples up to then.
      const file = slack.upload && deps.chart ? await deps.chart(alert) : undefined;
      if (!file || !slack.upload) {
        await store.completeOutbox(item.seq, iso, 'dropped', undefined, 'no chart to send');
        return 'dropped';
      }
      await slack.upload(alert.channel, alert.messageTs, file);
    } else if (item.kind === 'update') {
      await slack.update(alert.channel, alert.messageTs, await render.alert(alert, now));
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

  return async function deliver(item: OutboxItem, slack: SlackSender): Promise<Delivered> {
    if (item.kind === 'notice') return await deliverNotice(deps, item, slack);
    const alert = await store.getAlert(item.alertId);
    if (!alert) return 'dropped';
    const now = deps.now();
    if (item.kind === 'post' && alert.groupId !== undefined && !alert.messageTs)
      return await deliverGroupPost(item, { ...alert, groupId: alert.groupId }, slack);
    if (item.kind === 'update' && alert.groupId !== undefined && alert.messageTs && alert.channel) {
      const { message } = await render.group(alert.groupId, now);
      await render.updateGroup(slack, alert.channel, alert.messageTs, message);
      await store.completeOutbox(item.seq, now.toISOString(), 'sent');
      return 'sent';
    }
    if (item.kind === 'post') return await deliverAlertPost(item, alert, slack, now);
    if (!alert.messageTs || !alert.channel) {
      // Its post was given up for good: there is no message to update or reply to.
      await store.completeOutbox(item.seq, now.toISOString(), 'dropped', undefined, 'no message to update');
      return 'dropped';
    }
    return await deliverToMessage(
      item,
      { ...alert, channel: alert.channel, messageTs: alert.messageTs },
      slack,
      now,
    );
  };
}
