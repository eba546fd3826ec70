import { type Locale, localeFromSlack } from '../../i18n/index.js';

export interface UserLocalesOptions {
  /** The user's Slack locale (`SlackDirectory.userLocale`); throws when Slack cannot be asked. */
  lookup: (userId: string) => Promise<string | undefined>;
  /** Milliseconds since the epoch; injected so the cache can be tested without waiting. */
  now?: () => number;
  /** How long a user's locale is kept: people rarely change it, and each command must stay fast. */
  ttlMs?: number;
  /** How long a failed lookup is kept, so a Slack outage costs one slow command, not every one. */
  failureTtlMs?: number;
}

interface Entry {
  locale: Locale | undefined;
  expiresAt: number;
}

/**
 * A user's language: their own Slack locale when it is `tr-TR` or `en-*`, else undefined (the
 * config's `locale` then applies). Cached per user like the guards' user-group lookups, with one
 * lookup in flight per user; never throws, since a language is never a reason to refuse a command.
 */
export function createUserLocales(
  options: UserLocalesOptions,
): (userId: string) => Promise<Locale | undefined> {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 60 * 60_000;
  const failureTtlMs = options.failureTtlMs ?? 60_000;
  const cache = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<Locale | undefined>>();

  return async (userId) => {
    const cached = cache.get(userId);
    if (cached && now() <= cached.expiresAt) return cached.locale;
    let lookup = inFlight.get(userId);
    if (!lookup) {
      lookup = (async () => {
        try {
          const locale = localeFromSlack(await options.lookup(userId));
          cache.set(userId, { locale, expiresAt: now() + ttlMs });
          return locale;
        } catch {
          cache.set(userId, { locale: undefined, expiresAt: now() + failureTtlMs });
          return undefined;
        } finally {
          inFlight.delete(userId);
        }
      })();
      inFlight.set(userId, lookup);
    }
    return lookup;
  };
}
