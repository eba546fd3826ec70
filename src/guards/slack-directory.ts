import type { WebClient } from '@slack/web-api';

/**
 * What the guards need to know about people that only Slack can tell: who is in a user group,
 * and whether a user has two-factor authentication on. Both methods throw when Slack cannot be
 * asked (network, `ok: false`, rate limit, timeout); callers treat a throw as "not granted".
 */
export interface SlackDirectory {
  /** The user ids in a user group (`S…`), from `usergroups.users.list`. */
  usergroupMembers(groupId: string): Promise<string[]>;
  /**
   * `users.info`'s `has_2fa`. `undefined` means Slack did not say: with a bot token the field
   * is normally absent for everyone but workspace admins, and unknown must never count as on.
   */
  userHas2fa(userId: string): Promise<boolean | undefined>;
  /**
   * The user's own Slack locale (`users.info` with `include_locale`, e.g. `tr-TR`), which picks
   * the language of their answers; `undefined` when Slack did not say. Optional: a directory
   * without it leaves everyone on the config's `locale`.
   */
  userLocale?(userId: string): Promise<string | undefined>;
  /**
   * Who is in a channel (`conversations.members`, every page); scope `channels:read` or
   * `groups:read`. A private channel the bot is not in answers `channel_not_found`.
   */
  channelMembers?(channelId: string): Promise<string[]>;
  /** Whether a channel is private (`conversations.info`'s `is_private`, or a DM). */
  channelIsPrivate?(channelId: string): Promise<boolean>;
}

export interface SlackDirectoryOptions {
  /**
   * Upper bound on one lookup. A slash command has 3 s to be acknowledged and WebClient retries
   * rate-limited calls for up to half an hour, so a slow Slack must become a denial, not a hang.
   */
  timeoutMs?: number;
}

/** A directory backed by the Slack Web API (scopes `usergroups:read` and `users:read`). */
export function createSlackDirectory(client: WebClient, options: SlackDirectoryOptions = {}): SlackDirectory {
  const timeoutMs = options.timeoutMs ?? 2500;
  return {
    async usergroupMembers(groupId) {
      const res = await withTimeout(
        client.usergroups.users.list({ usergroup: groupId }),
        timeoutMs,
        `usergroups.users.list ${groupId}`,
      );
      return res.users ?? [];
    },
    async userHas2fa(userId) {
      const res = await withTimeout(client.users.info({ user: userId }), timeoutMs, `users.info ${userId}`);
      const value = res.user?.has_2fa;
      return typeof value === 'boolean' ? value : undefined;
    },
    async userLocale(userId) {
      const res = await withTimeout(
        client.users.info({ user: userId, include_locale: true }),
        timeoutMs,
        `users.info ${userId}`,
      );
      const value = res.user?.locale;
      return typeof value === 'string' && value ? value : undefined;
    },
    async channelMembers(channelId) {
      const members: string[] = [];
      let cursor: string | undefined;
      // 1,000 a page; a channel of 20,000 people is 20 calls, once per cache period.
      for (let page = 0; page < 50; page++) {
        const res = await withTimeout(
          client.conversations.members({ channel: channelId, limit: 1000, ...(cursor ? { cursor } : {}) }),
          timeoutMs,
          `conversations.members ${channelId}`,
        );
        members.push(...(res.members ?? []));
        cursor = res.response_metadata?.next_cursor || undefined;
        if (!cursor) break;
      }
      return members;
    },
    async channelIsPrivate(channelId) {
      const res = await withTimeout(
        client.conversations.info({ channel: channelId }),
        timeoutMs,
        `conversations.info ${channelId}`,
      );
      const channel = res.channel;
      return channel?.is_private === true || channel?.is_im === true || channel?.is_mpim === true;
    },
  };
}

/**
 * The directory for the command line and the offline demo, where there is no Slack to ask: a
 * user group has no members (so a group entry in `roles:` grants nothing there) and 2FA is
 * unknown (so with `approvals.require2fa: true` admin actions are refused). On the command line
 * only user ids (`--user U…`) and `"*"` count.
 */
export function createOfflineDirectory(): SlackDirectory {
  return {
    async usergroupMembers() {
      return [];
    },
    async userHas2fa() {
      return undefined;
    },
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer from Slack within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
