import { ReplyError } from 'ioredis';
import { OpsError } from '../errors.js';

/**
 * The one place that tells what an error from ioredis means. Every path that has to decide
 * "Redis went away" (wait, resume, answer `RedisUnavailable`), "Redis refused this user"
 * (`RedisForbidden`) or "Redis answered what we sent" (a reply, passed on) asks here.
 *
 * - `commandTimeout`, `connectTimeout`, `refused`, `notConnected`, `lost`: Redis did not answer.
 * - `noSuchDatabase`: the server refused the SELECT of the URL's db (see redis-client.ts).
 * - `forbidden`: NOPERM, or a script running a command the ACL user may not (README's read-only
 *   user asked to act).
 * - `oom`, `busy`, `loading`: the replies of a Redis at maxmemory, running a long script, or
 *   loading its dataset.
 * - `unavailableReply`: NOAUTH, WRONGPASS, MASTERDOWN, MISCONF: this Redis cannot serve us now.
 * - `reply`: any other error reply (a bug in what was sent, WRONGTYPE, NOSCRIPT…).
 * - `ours`: a TypeError, SyntaxError, RangeError or ReferenceError: a bug of ours, not Redis.
 * - `coded`: already an `OpsError`. `other`: anything else thrown without a reply.
 */
export type RedisErrorKind =
  | 'commandTimeout'
  | 'connectTimeout'
  | 'refused'
  | 'notConnected'
  | 'lost'
  | 'noSuchDatabase'
  | 'forbidden'
  | 'oom'
  | 'busy'
  | 'loading'
  | 'unavailableReply'
  | 'reply'
  | 'ours'
  | 'coded'
  | 'other';

export interface RedisErrorClass {
  kind: RedisErrorKind;
  /** Redis answered with an error reply (as opposed to not answering at all). */
  replied: boolean;
  /**
   * This Redis cannot serve us now: it did not answer (closed, reset, refused, timed out), or
   * answered one of the replies that say so (LOADING, BUSY, NOAUTH, WRONGPASS, MASTERDOWN,
   * MISCONF). An `OpsError` never is.
   */
  unavailable: boolean;
}

/** Redis' answer to `SELECT n` beyond its `databases` (and Redis Cluster's, which has only 0). */
export const SELECT_REFUSED =
  /DB index is out of range|invalid DB index|SELECT is not allowed in cluster mode/i;

/**
 * What ioredis fails a command with when its Redis was killed under it (a pipeline, a MULTI, a
 * lone command), never naming why: all of it reads as "connection lost".
 */
const CONNECTION_LOST =
  /max retries per request|Connection is closed|aborted due to connection close|ECONNRESET|EPIPE/i;

/** Replies that mean "this Redis cannot serve us now", as opposed to a bug in what we sent. */
const UNAVAILABLE_REPLY = /^(NOAUTH|WRONGPASS|LOADING|MASTERDOWN|BUSY|MISCONF)\b/;

/** The ACL refusals: a command, or a command inside a script. */
const FORBIDDEN = /^NOPERM\b|user executing the script can't run this command/i;

/** "connect timeout", "Connection is closed": true, but they say nothing of why. */
const VAGUE = /connect timeout|connection (is )?closed/i;

function messageOf(error: unknown): string {
  return String((error as Error)?.message ?? error);
}

/** The first line of what was thrown, at most 200 characters: what a reason may quote. */
export function firstLineOf(error: unknown): string {
  return messageOf(error).split('\n')[0]!.slice(0, 200);
}

/** A reply error means Redis answered; anything else (closed, timed out) means it did not. */
export function isReplyError(error: unknown): boolean {
  return error instanceof ReplyError || (error as Error)?.name === 'ReplyError';
}

function isOurBug(error: unknown): boolean {
  return (
    error instanceof TypeError ||
    error instanceof SyntaxError ||
    error instanceof RangeError ||
    error instanceof ReferenceError
  );
}

function kindOf(error: unknown, replied: boolean): RedisErrorKind {
  if (error instanceof OpsError) return 'coded';
  if (isOurBug(error)) return 'ours';
  const line = firstLineOf(error);
  if (FORBIDDEN.test(messageOf(error).split('\n')[0]!)) return 'forbidden';
  if (/Command timed out/i.test(line)) return 'commandTimeout';
  if (/connect timeout|ETIMEDOUT/i.test(line)) return 'connectTimeout';
  if (/ECONNREFUSED/i.test(line)) return 'refused';
  if (/Stream isn't writeable|enableOfflineQueue/i.test(line)) return 'notConnected';
  if (CONNECTION_LOST.test(line)) return 'lost';
  if (SELECT_REFUSED.test(line)) return 'noSuchDatabase';
  if (/^OOM\b/.test(line)) return 'oom';
  if (/^BUSY\b/.test(line)) return 'busy';
  if (/^LOADING\b/.test(line)) return 'loading';
  if (UNAVAILABLE_REPLY.test(line)) return 'unavailableReply';
  return replied ? 'reply' : 'other';
}

export function classifyRedisError(error: unknown): RedisErrorClass {
  const replied = isReplyError(error);
  const kind = kindOf(error, replied);
  const unavailable =
    kind !== 'coded' && (!replied || UNAVAILABLE_REPLY.test(String((error as Error)?.message)));
  return { kind, replied, unavailable };
}

/**
 * Is this what ioredis throws when the Redis went away or stopped answering (a closed or reset
 * connection, a command sent while reconnecting, a timeout, an unavailable reply), rather than a
 * reply to what was sent? A bug of ours (a line that does not parse, a missing field) is not Redis
 * going away: taken for one, an undo or purge would wait "for Redis" and be retried every 30 s
 * for ever.
 */
export function isConnectionFailure(error: unknown): boolean {
  const { kind, unavailable } = classifyRedisError(error);
  return unavailable && kind !== 'ours';
}

/**
 * An error reply that is a plain answer to what was sent, to be passed on as it is: not one of
 * the replies that mean the Redis cannot serve us now.
 */
export function isPlainReply(error: unknown): boolean {
  const { replied, unavailable } = classifyRedisError(error);
  return replied && !unavailable;
}

/** "connect timeout" or "Connection is closed": the socket's own earlier error says more. */
export function isVagueConnectionError(error: unknown): boolean {
  return VAGUE.test(messageOf(error));
}
