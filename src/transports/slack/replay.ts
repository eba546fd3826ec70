import type { Context, Middleware, NextFn } from '@slack/bolt';
import type { Logger } from '../../lib/logger.js';
import type { Store } from '../../store/store.js';

/**
 * How long a signature is remembered: Bolt accepts a signed request up to five minutes old, and a
 * minute more covers clocks that disagree a little.
 */
export const REPLAY_WINDOW_MS = 6 * 60_000;

/** How far ahead of this clock a request may be stamped: Slack's five minutes. */
const FUTURE_SKEW_MS = 5 * 60_000;

/** Where the HTTP receiver leaves the request's signature headers in Bolt's context. */
export const SIGNATURE_CONTEXT_KEY = 'queueOpsSignature';

export interface SignatureHeaders {
  signature: string;
  /** `x-slack-request-timestamp`, seconds. */
  timestamp?: number;
}

/** Signatures of requests already handled. */
export interface SeenSignatures {
  /** True the first time a signature is offered within the window, false for a replay. */
  firstSeen(headers: SignatureHeaders): Promise<boolean>;
}

export interface SeenSignaturesDeps {
  /** Shares the memory between replicas; without it, each process remembers its own. */
  store?: Pick<Store, 'rememberSignature'>;
  now?: () => number;
  logger?: Logger;
  /** Signatures kept in memory, at most (the oldest go first). Default 10,000. */
  maxInMemory?: number;
}

/**
 * Remembers signatures for the replay window: in a bounded map first (a replay to this replica
 * costs no query), then in the store, whose insert-if-absent answers for every replica. When the
 * store cannot answer, this replica's memory still does and the lapse is logged: refusing every
 * Slack request because the store blinked would stop the bot in an incident.
 */
export function createSeenSignatures(deps: SeenSignaturesDeps = {}): SeenSignatures {
  const now = deps.now ?? Date.now;
  const max = Math.max(1, deps.maxInMemory ?? 10_000);
  // signature → until when it counts as seen; insertion order is time order.
  const memory = new Map<string, number>();

  const forgetExpired = (at: number) => {
    for (const [signature, until] of memory) {
      if (until > at) break;
      memory.delete(signature);
    }
  };

  return {
    async firstSeen({ signature, timestamp }) {
      const at = now();
      forgetExpired(at);
      if (memory.has(signature)) return false;
      // A request stamped ahead of our clock is still accepted by Bolt until its own time plus
      // the window, so it is remembered from whichever is later.
      const stamped = timestamp !== undefined && Number.isFinite(timestamp) ? timestamp * 1000 : at;
      const from = Math.max(at, stamped);
      memory.set(signature, from + REPLAY_WINDOW_MS);
      while (memory.size > max) memory.delete(memory.keys().next().value as string);
      if (!deps.store) return true;
      try {
        return await deps.store.rememberSignature(
          signature,
          new Date(from).toISOString(),
          new Date(at - REPLAY_WINDOW_MS).toISOString(),
        );
      } catch (error) {
        deps.logger?.warn(
          { err: error },
          'seen signatures not shared through the store; this replica still refuses its own replays',
        );
        return true;
      }
    },
  };
}

/**
 * For Bolt's HTTPReceiver `customPropertiesExtractor`: runs after the signature was verified and
 * copies the signature headers into the context for {@link refuseReplays}.
 */
export function signatureProperties(request: {
  headers: Record<string, string | string[] | undefined>;
}): Record<string, unknown> {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const signature = header('x-slack-signature');
  if (!signature) return {};
  const timestamp = Number(header('x-slack-request-timestamp'));
  const headers: SignatureHeaders = Number.isFinite(timestamp) ? { signature, timestamp } : { signature };
  return { [SIGNATURE_CONTEXT_KEY]: headers };
}

/**
 * Global Bolt middleware: a signed body whose signature was already handled within the window is
 * acknowledged (so nothing retries it) and dropped before any listener or guard runs. A replay
 * of `pause` with `approvals: 0` would otherwise pause again; one of a button, approve again.
 *
 * Every signed request is acknowledged before the check: Slack's 3 s run from the moment it sent
 * the request, and the check is a store write (an fsync on SQLite) that two hundred commands
 * typed together would otherwise wait for one after another (seconds, measured by
 * `npm run bench -- load`). Every request this bot takes is acknowledged with an empty body, so
 * acknowledging earlier changes nothing else; the listener's own `ack()` is then a no-op
 * (`ackOnce` in create-app.ts).
 */
export function refuseReplays(
  seen: SeenSignatures,
  logger: Logger,
  now: () => number = Date.now,
): Middleware<object> {
  const log = logger.child({ component: 'slack-replay' });
  return async (args) => {
    const { context, next } = args as unknown as { context: Context; next: NextFn };
    const headers = context[SIGNATURE_CONTEXT_KEY] as SignatureHeaders | undefined;
    if (!headers) {
      await next();
      return;
    }
    const ack = (args as { ack?: () => Promise<void> }).ack;
    if (ack) await ack();
    // Slack's own rule is "more than five minutes from local time", both ways; Bolt refuses only
    // the old ones. A request stamped far ahead was not sent now by Slack: a captured body
    // re-signed, or a sender whose clock is wrong, and either way not to be run.
    if (headers.timestamp !== undefined && headers.timestamp * 1000 > now() + FUTURE_SKEW_MS) {
      log.warn({ timestamp: headers.timestamp }, 'Slack request stamped in the future refused');
      return;
    }
    if (await seen.firstSeen(headers)) {
      await next();
      return;
    }
    log.warn(
      { timestamp: headers.timestamp },
      'replayed Slack request refused: its signature was already handled',
    );
  };
}
