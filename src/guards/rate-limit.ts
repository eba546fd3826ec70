import type { Store } from '../store/store.js';

/** What the rate limit answers for one mutating command about to run. */
export type RateDecision = { allow: true } | { allow: false; limit: number; retryAfterSeconds: number };

/** Mutating commands per user per minute (`rateLimit.perUserPerMinute`). */
export interface RateLimiter {
  /** Counts one command for `userId` if it is within the limit; refuses (counting nothing) if not. */
  take(userId: string): Promise<RateDecision>;
}

export interface RateLimiterDeps {
  /** Where the window lives: the store every replica shares. */
  store: Pick<Store, 'takeRate' | 'pruneRate'>;
  perUserPerMinute: number;
  /** Milliseconds since the epoch. */
  now: () => number;
}

const WINDOW_MS = 60_000;

/**
 * A sliding one-minute window per user, kept in the store: every replica (and every command-line
 * run) counts against the same window, so N replicas together allow `perUserPerMinute`, not N
 * times it. A refused command counts nothing. Once a minute this process also forgets everyone's
 * uses older than the window, so the table holds at most one minute of commands.
 */
export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const limit = Math.max(1, Math.floor(deps.perUserPerMinute));
  let prunedAt = Number.NEGATIVE_INFINITY;

  return {
    async take(userId) {
      const now = deps.now();
      const windowStart = new Date(now - WINDOW_MS).toISOString();
      const taken = await deps.store.takeRate(
        `user:${userId}`,
        new Date(now).toISOString(),
        windowStart,
        limit,
      );
      if (!taken.taken) {
        const retryAfterSeconds = Math.max(
          1,
          Math.ceil((Date.parse(taken.oldestAt) + WINDOW_MS - now) / 1000),
        );
        return { allow: false, limit, retryAfterSeconds };
      }
      if (now - prunedAt >= WINDOW_MS) {
        prunedAt = now;
        // Housekeeping: a failure here must not refuse a command that was within its limit.
        await deps.store.pruneRate(windowStart).catch(() => 0);
      }
      return { allow: true };
    },
  };
}
