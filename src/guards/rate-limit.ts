import { ErrorCode } from '../errors.js';
import type { Reply } from '../pipeline/types.js';
import type { Store } from '../store/store.js';

/** What the rate limit answers for one mutating command about to run. */
export type RateDecision =
  | {
      allow: true;
      /** Gives the use back: the command was counted, then did not run (typo, usage, refusal). */
      release(): Promise<void>;
    }
  | { allow: false; limit: number; retryAfterSeconds: number };

/** Mutating commands per user per minute (`rateLimit.perUserPerMinute`). */
export interface RateLimiter {
  /** Counts one command for `userId` if it is within the limit; refuses (counting nothing) if not. */
  take(userId: string): Promise<RateDecision>;
}

export interface RateLimiterDeps {
  /** Where the window lives: the store every replica shares. */
  store: Pick<Store, 'takeRate' | 'pruneRate' | 'releaseRate'>;
  perUserPerMinute: number;
  /** Milliseconds since the epoch. */
  now: () => number;
}

const WINDOW_MS = 60_000;

/**
 * A sliding one-minute window per user, kept in the store: every replica (and every command-line
 * run) counts against the same window, so N replicas together allow `perUserPerMinute`, not N
 * times it. A refused command counts nothing, and a command that was counted but then did not run
 * (a typo, a usage error, a refusal; see `actionRan`) is given back. Once a minute this process also forgets everyone's
 * uses older than the window, so the table holds at most one minute of commands.
 */
export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const limit = Math.max(1, Math.floor(deps.perUserPerMinute));
  let prunedAt = Number.NEGATIVE_INFINITY;

  return {
    async take(userId) {
      const now = deps.now();
      const windowStart = new Date(now - WINDOW_MS).toISOString();
      const key = `user:${userId}`;
      const at = new Date(now).toISOString();
      const taken = await deps.store.takeRate(key, at, windowStart, limit);
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
      // Counted first, given back after: commands at once still cannot get past the limit.
      return { allow: true, release: () => deps.store.releaseRate(key, at) };
    },
  };
}

/**
 * Whether a command's answer means its action ran (and so counts against the limit): it did, or
 * it stopped part-way (an interrupted retry or purge, an unexpected failure). A typo, a usage
 * error or a refusal (unknown job, nothing to retry, not allowed, already in that state…) did not.
 */
export function actionRan(reply: Pick<Reply, 'ok' | 'error'>): boolean {
  if (reply.ok) return true;
  return PARTLY_RAN.has(reply.error?.code ?? 'Internal');
}

const PARTLY_RAN = new Set<string>([
  ErrorCode.RetryInterrupted,
  ErrorCode.PurgeInterrupted,
  ErrorCode.UndoInterrupted,
  'Internal',
]);
