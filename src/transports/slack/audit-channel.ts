import type { webApi } from '@slack/bolt';
import { auditBatchMessage, auditEntryMessage, type NotPosted } from '../../audit/blocks.js';
import type { Message } from '../../blocks/message.js';
import type { Locale } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import type { AuditEntry } from '../../store/store.js';
import { auditWitnessMetadata } from './audit-witness.js';
import { postMessage } from './listeners.js';

export interface AuditChannelSinkDeps {
  client: webApi.WebClient;
  /** `slack.auditChannel`. */
  channel: string;
  logger: Logger;
  locale?: Locale;
  /** Entries waiting to be posted, at most; the oldest beyond it are left out and counted. Default 500. */
  maxQueued?: number;
  /** Entries per post, at most. Default 20. */
  batchSize?: number;
  /** Pause after each post: Slack allows about one post per second per channel. Default 1000 ms. */
  minIntervalMs?: number;
}

/** The audit trail's sink for `slack.auditChannel`, and a way to wait until it has caught up. */
export interface AuditChannelSink {
  /** Queues the entry and returns at once; the entry is already in the store. */
  sink(entry: AuditEntry): Promise<void>;
  /** Resolves when everything queued so far has been posted or given up on (shutdown, tests). */
  idle(): Promise<void>;
}

/**
 * Posts audit entries to the audit channel in batches, one post at a time, from a bounded queue.
 * `/queue status` typed in a loop must neither grow memory without limit nor delay the entries
 * that matter behind an hour-long backlog: when the queue is full the oldest waiting entries are
 * left out, and the next post says how many and which. Entries are in the store before they get
 * here, so nothing left out of the channel is lost; a post Slack refuses is counted the same way.
 */
export function createAuditChannelSink(deps: AuditChannelSinkDeps): AuditChannelSink {
  const locale = deps.locale ?? 'en';
  const log = deps.logger.child({ component: 'slack-audit' });
  const maxQueued = Math.max(1, deps.maxQueued ?? 500);
  const batchSize = Math.max(1, deps.batchSize ?? 20);
  const minIntervalMs = Math.max(0, deps.minIntervalMs ?? 1000);
  const queue: AuditEntry[] = [];
  let notPosted: NotPosted | undefined;
  let pumping: Promise<void> | undefined;

  const leaveOut = (entries: readonly AuditEntry[]) => {
    if (entries.length === 0) return;
    const seqs = entries.map((e) => e.seq);
    notPosted = merge(notPosted, {
      count: entries.length,
      firstSeq: Math.min(...seqs),
      lastSeq: Math.max(...seqs),
    });
  };

  const post = async (batch: AuditEntry[]) => {
    const note = notPosted;
    notPosted = undefined;
    // A lone entry with nothing to report keeps the full single-entry layout.
    const message: Message =
      batch.length === 1 && !note
        ? auditEntryMessage(batch[0]!, locale)
        : auditBatchMessage(batch, note, locale);
    try {
      await postMessage(deps.client, deps.channel, message, {
        logger: log,
        locale,
        // Read back by `audit verify` (createAuditChannelWitness): the full hashes, not the text.
        metadata: auditWitnessMetadata(batch),
      });
    } catch (error) {
      const slackError = (error as { data?: { error?: unknown } }).data?.error;
      log.warn(
        { err: error, seqs: [batch[0]?.seq, batch[batch.length - 1]?.seq], slackError },
        'audit entries not posted to the audit channel; they are stored',
      );
      // Said in the next post that gets through, together with whatever was already unreported.
      if (note) notPosted = merge(notPosted, note);
      leaveOut(batch);
    }
  };

  const pump = async () => {
    // Let entries recorded in the same tick join the first post.
    await Promise.resolve();
    while (queue.length > 0) {
      await post(queue.splice(0, batchSize));
      if (minIntervalMs > 0 && queue.length > 0) await new Promise((r) => setTimeout(r, minIntervalMs));
    }
  };

  const start = () => {
    pumping ??= pump().finally(() => {
      pumping = undefined;
      // An entry queued just as the last post finished starts the next run.
      if (queue.length > 0) start();
    });
  };

  return {
    async sink(entry) {
      queue.push(entry);
      if (queue.length > maxQueued) leaveOut(queue.splice(0, queue.length - maxQueued));
      start();
    },
    async idle() {
      while (pumping) await pumping;
    },
  };
}

function merge(a: NotPosted | undefined, b: NotPosted): NotPosted {
  if (!a) return b;
  return {
    count: a.count + b.count,
    firstSeq: Math.min(a.firstSeq, b.firstSeq),
    lastSeq: Math.max(a.lastSeq, b.lastSeq),
  };
}
