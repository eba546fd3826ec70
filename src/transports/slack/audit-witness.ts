import type { webApi } from '@slack/bolt';
import type { AuditWitness, WitnessHead } from '../../audit/witness.js';
import { loadBolt } from '../../lib/lazy.js';
import type { Logger } from '../../lib/logger.js';
import type { AuditEntry } from '../../store/store.js';

/**
 * Bolt's Web API client and the bot's logger adapter (create-app.ts imports Bolt at its top), for
 * the command line, which loads them only when it reads the audit channel back.
 */
const loadSlackWebApi = () =>
  Promise.all([loadBolt(), import('./create-app.js')]).then(([bolt, app]) => ({
    webApi: bolt.webApi,
    boltLogger: app.boltLogger,
  }));

/** The metadata event type on every audit-channel post; `audit verify` reads these back. */
export const AUDIT_WITNESS_EVENT = 'queue_ops_audit_head';

/**
 * Message metadata for a post carrying `entries` (one, or a batch): the newest of them as
 * `{ seq, hash, at, keyId? }`. Only apps can post metadata, so a person in the channel cannot
 * forge one; and posts are only ever added, so the newest one is the head when it was posted.
 */
export function auditWitnessMetadata(entries: readonly AuditEntry[]): {
  event_type: string;
  event_payload: Record<string, string | number>;
} {
  const newest = entries.reduce((a, b) => (b.seq > a.seq ? b : a));
  return {
    event_type: AUDIT_WITNESS_EVENT,
    event_payload: {
      seq: newest.seq,
      hash: newest.hash,
      at: newest.at,
      ...(newest.keyId ? { keyId: newest.keyId } : {}),
    },
  };
}

interface HistoryMessage {
  bot_id?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

function headOf(message: HistoryMessage): WitnessHead | undefined {
  if (message.metadata?.event_type !== AUDIT_WITNESS_EVENT) return undefined;
  const p = message.metadata.event_payload ?? {};
  const seq = typeof p.seq === 'number' ? p.seq : Number(p.seq);
  if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
  if (typeof p.hash !== 'string' || !/^[0-9a-f]{64}$/.test(p.hash)) return undefined;
  return {
    seq,
    hash: p.hash,
    ...(typeof p.at === 'string' ? { at: p.at } : {}),
    ...(typeof p.keyId === 'string' ? { keyId: p.keyId } : {}),
  };
}

export interface AuditChannelWitnessDeps {
  client: webApi.WebClient;
  /** `slack.auditChannel`. */
  channel: string;
  /** This bot's id; looked up with `auth.test` when not given. Posts by any other app are ignored. */
  botId?: string;
  /** Messages read per `conversations.history` page, and how many pages at most. */
  pageSize?: number;
  maxPages?: number;
}

/**
 * `slack.auditChannel` as a witness: the bot already posts every entry there (with its full hash
 * in the message metadata), and a database writer cannot delete or edit those posts. Reads the
 * channel's history newest first and takes the highest seq among this bot's posts on the first
 * page that has any; people chatting in the channel only push the posts down, so a few pages are
 * read before giving up.
 */
export function createAuditChannelWitness(deps: AuditChannelWitnessDeps): AuditWitness {
  const pageSize = deps.pageSize ?? 200;
  const maxPages = deps.maxPages ?? 5;
  let botId = deps.botId;
  return {
    kind: 'channel',
    where: deps.channel,
    async newestHead() {
      botId ??= (await deps.client.auth.test()).bot_id as string | undefined;
      let cursor: string | undefined;
      for (let page = 0; page < maxPages; page++) {
        const res = await deps.client.conversations.history({
          channel: deps.channel,
          limit: pageSize,
          include_all_metadata: true,
          ...(cursor ? { cursor } : {}),
        });
        let newest: WitnessHead | undefined;
        for (const message of (res.messages ?? []) as HistoryMessage[]) {
          if (botId && message.bot_id !== botId) continue;
          const head = headOf(message);
          if (head && (!newest || head.seq > newest.seq)) newest = head;
        }
        if (newest) return newest;
        cursor = res.response_metadata?.next_cursor || undefined;
        if (!res.has_more || !cursor) return undefined;
      }
      return undefined;
    },
  };
}

/**
 * For an entry point without a running bot (the command line): the audit channel witness when
 * `SLACK_BOT_TOKEN` is set and `slack.auditChannel` is configured, otherwise none. Slack's client
 * is loaded and built only when `audit verify` reads it, so other commands start as fast as before.
 */
export function auditChannelWitnessFromEnv(
  env: Record<string, string | undefined>,
  channel: string | undefined,
  logger: Logger,
): AuditWitness[] {
  const token = env.SLACK_BOT_TOKEN;
  if (!token || !channel) return [];
  const apiUrl = env.SLACK_API_URL;
  let witness: AuditWitness | undefined;
  return [
    {
      kind: 'channel',
      where: channel,
      async newestHead() {
        if (!witness) {
          const { webApi: api, boltLogger } = await loadSlackWebApi();
          const client = new api.WebClient(token, {
            retryConfig: { retries: 1 },
            timeout: 10_000,
            logger: boltLogger(logger),
            ...(apiUrl && /^https?:\/\//.test(apiUrl)
              ? { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` }
              : {}),
          });
          witness = createAuditChannelWitness({ client, channel });
        }
        return await witness.newestHead();
      },
    },
  ];
}
