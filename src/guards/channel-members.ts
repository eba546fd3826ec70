import type { ChannelMembership } from '../approvals/service.js';
import type { SlackDirectory } from './slack-directory.js';

export interface ChannelMembershipOptions {
  directory: Pick<SlackDirectory, 'channelMembers' | 'channelIsPrivate'>;
  /** Milliseconds since the epoch; injected so the cache can be tested without waiting. */
  now: () => number;
  /** How long a channel's members (and whether it is private) are trusted; 5 minutes at most. */
  cacheTtlMs?: number;
  /** How long a failed lookup is remembered (it refuses meanwhile). */
  failureTtlMs?: number;
  /** Told about each failed lookup (for the log). */
  onLookupError?: (channel: string, error: unknown) => void;
}

/**
 * Who may answer from the App Home tab what was asked in a channel. `fresh`: ask Slack now (a
 * click that would change something), rather than trust the cache (listing the tab).
 */
export type ChannelMembershipCheck = (
  userId: string,
  channel: string,
  options?: { fresh?: boolean },
) => Promise<ChannelMembership>;

interface Entry<T> {
  expiresAt: number;
  value?: T;
  error?: string;
}

/** Slack's own error word (`channel_not_found`, `missing_scope`…) or the failure's message. */
export function slackErrorOf(error: unknown): string {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  if (data && typeof data.error === 'string' && data.error) return data.error;
  return error instanceof Error ? error.message : String(error);
}

/**
 * `conversations.members` (and, for someone not among them, `conversations.info`: a public channel
 * is anyone's to join), each cached per channel for at most 5 minutes (for listing the tab; a
 * click asks `fresh`), one call at a time per channel. Anything Slack does not answer (`channel_not_found` for a private channel the bot is
 * not in, `missing_scope`, a timeout) is `{ unknown }`, which refuses: never a guess either way.
 */
export function createChannelMembership(options: ChannelMembershipOptions): ChannelMembershipCheck {
  const ttl = Math.min(options.cacheTtlMs ?? 5 * 60_000, 5 * 60_000);
  const failureTtl = Math.min(options.failureTtlMs ?? 10_000, ttl);
  const members = new Map<string, Entry<ReadonlySet<string>>>();
  const privacy = new Map<string, Entry<boolean>>();
  const inFlight = new Map<string, Promise<unknown>>();

  function cached<T>(
    method: string,
    cache: Map<string, Entry<T>>,
    key: string,
    load: () => Promise<T>,
    fresh = false,
  ): Promise<Entry<T>> {
    const hit = cache.get(key);
    if (!fresh && hit && options.now() <= hit.expiresAt) return Promise.resolve(hit);
    const flightKey = `${method} ${key}`;
    const pending = inFlight.get(flightKey) as Promise<Entry<T>> | undefined;
    if (pending) return pending;
    const lookup = (async (): Promise<Entry<T>> => {
      try {
        const entry = { value: await load(), expiresAt: options.now() + ttl };
        cache.set(key, entry);
        return entry;
      } catch (error) {
        options.onLookupError?.(key, error);
        const entry: Entry<T> = { error: slackErrorOf(error), expiresAt: options.now() + failureTtl };
        cache.set(key, entry);
        return entry;
      } finally {
        inFlight.delete(flightKey);
      }
    })();
    inFlight.set(flightKey, lookup);
    return lookup;
  }

  return async (userId, channel, { fresh = false } = {}) => {
    const { channelMembers, channelIsPrivate } = options.directory;
    if (!channelMembers || !channelIsPrivate) return { unknown: 'no Slack client' };
    const inChannel = await cached(
      'conversations.members',
      members,
      channel,
      async () => new Set(await channelMembers(channel)),
      fresh,
    );
    if (inChannel.value?.has(userId)) return 'member';
    const isPrivate = await cached(
      'conversations.info',
      privacy,
      channel,
      () => channelIsPrivate(channel),
      fresh,
    );
    if (isPrivate.value === false) return 'public';
    if (isPrivate.error !== undefined) return { unknown: isPrivate.error };
    // Private: its member list decides, and without one nobody is let through.
    if (inChannel.error !== undefined) return { unknown: inChannel.error };
    return 'not-member';
  };
}
