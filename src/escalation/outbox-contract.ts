import type { Message } from '../blocks/message.js';
import type { EscalationConfig } from '../config/schema.js';
import type { Locale } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { Pagers } from '../paging/registry.js';
import type { Alert } from '../store/alert.js';
import type { EscalationStore } from '../store/store.js';
import type { AlertJobs } from './alert-jobs.js';
import type { AlertOwnerLookup } from './blocks.js';

/*
 * The outbox's contract: what it needs (Slack, the store, its settings) and what a drain answers.
 * Its lanes live beside it: messages and charts (outbox-messages.ts, delivered by outbox.ts),
 * pages (outbox-pages.ts).
 */

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
export type LaneResult = Omit<DrainResult, 'pending'>;

/** Back-off after a failure with no Retry-After: 2, 4, 8… s, at most a minute. */
export const backoffMs = (attempts: number) => Math.min(60_000, 2000 * 2 ** Math.min(attempts, 5));

/** The settings the alert messages are rendered with: the escalation's, and who may be paged. */
export type MessageSettings = OutboxDeps['settings'] & {
  ownerOf?: AlertOwnerLookup;
  canPage?: (alert: Alert) => boolean;
};
