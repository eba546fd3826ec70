/** What the rate limit answers for one mutating command about to run. */
export type RateDecision = { allow: true } | { allow: false; limit: number; retryAfterSeconds: number };

/**
 * Mutating commands per user per minute (`rateLimit.perUserPerMinute`). Asynchronous so that a
 * store-backed limit shared by replicas can take this one's place without touching the guards.
 */
export interface RateLimiter {
  /** Counts one command for `userId` if it is within the limit; refuses (counting nothing) if not. */
  take(userId: string): Promise<RateDecision>;
}

export interface RateLimiterDeps {
  perUserPerMinute: number;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Users remembered at once; beyond it, users idle for a minute are forgotten first. */
  maxUsers?: number;
}

const WINDOW_MS = 60_000;

/**
 * A sliding one-minute window per user, in this process's memory: a user's times are at most
 * `perUserPerMinute` numbers, and users with nothing in the window are dropped, so memory stays
 * bounded by the people actually typing. With several replicas each counts its own commands.
 */
export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const limit = Math.max(1, Math.floor(deps.perUserPerMinute));
  const maxUsers = deps.maxUsers ?? 10_000;
  const times = new Map<string, number[]>();

  const forgetIdle = (now: number) => {
    for (const [user, list] of times) {
      if ((list[list.length - 1] ?? 0) <= now - WINDOW_MS) times.delete(user);
    }
  };

  return {
    async take(userId) {
      const now = deps.now();
      const recent = (times.get(userId) ?? []).filter((t) => t > now - WINDOW_MS);
      if (recent.length >= limit) {
        times.set(userId, recent);
        const retryAfterSeconds = Math.max(1, Math.ceil((recent[0]! + WINDOW_MS - now) / 1000));
        return { allow: false, limit, retryAfterSeconds };
      }
      recent.push(now);
      // Re-inserted so the map stays in order of last use.
      times.delete(userId);
      times.set(userId, recent);
      if (times.size > maxUsers) {
        forgetIdle(now);
        // Still too many active users: the least recently seen go first.
        for (const user of times.keys()) {
          if (times.size <= maxUsers) break;
          times.delete(user);
        }
      }
      return { allow: true };
    },
  };
}
