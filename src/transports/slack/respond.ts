import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { RespondArguments, RespondFn } from '@slack/bolt';
import type { Logger } from '../../lib/logger.js';

/** How an answer through a `response_url` is retried when Slack fails to take it. */
export interface RespondPolicy {
  /** Each POST's cut-off (default 10 s, as the bot's Web API clients). */
  timeoutMs: number;
  /** Tries in all, the first included (default 4). */
  attempts: number;
  /** The wait after the first failure without Retry-After; doubled after each (default 1 s). */
  backoffMs: number;
  /** The longest a single Retry-After is honoured for (default 60 s); longer ones give up. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RESPOND_POLICY: RespondPolicy = {
  timeoutMs: 10_000,
  attempts: 4,
  backoffMs: 1000,
  maxRetryAfterMs: 60_000,
};

/** `respond()` gave up: the status Slack last answered (undefined: no answer, a timeout). */
export class RespondFailed extends Error {
  constructor(
    message: string,
    readonly statusCode: number | undefined,
  ) {
    super(message);
    this.name = 'RespondFailed';
  }
}

/** The `response_url` Bolt would answer through for this payload, if it has one. */
export function responseUrlOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { response_url?: unknown; response_urls?: { response_url?: unknown }[] };
  if (typeof b.response_url === 'string' && b.response_url) return b.response_url;
  const first = Array.isArray(b.response_urls) ? b.response_urls[0]?.response_url : undefined;
  return typeof first === 'string' && first ? first : undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What `reliableRespond` reads of Slack's answer to one POST. */
export interface PostAnswer {
  status: number;
  /** The `Retry-After` header, if any. */
  retryAfter: string | null;
}

/** POSTs a JSON body; rejects on no answer within `timeoutMs` (error name `TimeoutError`). */
export type JsonPost = (url: string, body: string, timeoutMs: number) => Promise<PostAnswer>;

// Kept connections, as fetch keeps them: a burst of answers to Slack reuses a few sockets.
const agents = {
  http: new HttpAgent({ keepAlive: true }),
  https: new HttpsAgent({ keepAlive: true }),
};

/**
 * The POST of an answer over `node:http(s)`. fetch did the same job at several times the CPU and
 * garbage (a Request, Headers, web streams and an AbortSignal per answer): during a burst of two
 * hundred commands that was time the event loop did not spend reading and acknowledging the next
 * ones (`npm run bench -- load`).
 */
export const postJson: JsonPost = (url, body, timeoutMs) =>
  new Promise<PostAnswer>((resolve, reject) => {
    const target = new URL(url);
    const https = target.protocol === 'https:';
    const req = (https ? httpsRequest : httpRequest)(
      target,
      {
        method: 'POST',
        agent: https ? agents.https : agents.http,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const answer = { status: res.statusCode ?? 0, retryAfter: headerOf(res.headers['retry-after']) };
        res.on('error', fail);
        res.on('end', () => done(answer));
        res.resume();
      },
    );
    const timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      error.name = 'TimeoutError';
      req.destroy(error);
    }, timeoutMs);
    function done(answer: PostAnswer) {
      clearTimeout(timer);
      resolve(answer);
    }
    function fail(error: unknown) {
      clearTimeout(timer);
      reject(error);
    }
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A kept connection Slack closed as idle just as it was reused: the request never reached
      // it, so it goes again at once on a fresh one (not a failure to back off from).
      if (req.reusedSocket && error.code === 'ECONNRESET') {
        clearTimeout(timer);
        postJson(url, body, timeoutMs).then(resolve, reject);
      } else fail(error);
    });
    req.end(body);
  });

function headerOf(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/**
 * Bolt's `respond()` (a POST of JSON to the payload's `response_url`) with what it lacks when
 * Slack is failing: a timeout (Bolt's has none, so a hung Slack held the listener for minutes),
 * and retries of an answer Slack did not take: a 5xx, no answer, or a 429 after its Retry-After.
 * Anything else (404, 410: the url expired or was used 5 times) is final. The caller awaits each
 * answer before the next, so a request's answers keep their order. A response_url cannot be read
 * back, so an answer whose POST Slack took but never acknowledged (a hang) can show twice: twice
 * beats never for the person on call. The url is a credential for 30 minutes: never logged.
 */
export function reliableRespond(
  responseUrl: string,
  options: { post?: JsonPost; policy?: Partial<RespondPolicy>; logger: Logger },
): RespondFn {
  const policy = { ...DEFAULT_RESPOND_POLICY, ...options.policy };
  const post = options.post ?? postJson;
  const log = options.logger;
  return (async (message: string | RespondArguments) => {
    const args = typeof message === 'string' ? { text: message } : message;
    const body = JSON.stringify(args);
    for (let attempt = 1; ; attempt++) {
      let status: number | undefined;
      let retryAfterMs: number | undefined;
      let reason: string;
      try {
        const response = await post(responseUrl, body, policy.timeoutMs);
        if (response.status >= 200 && response.status < 300) return undefined as never;
        status = response.status;
        reason = `HTTP ${status}`;
        if (status === 429) {
          const seconds = Number(response.retryAfter);
          retryAfterMs = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : policy.backoffMs;
        } else if (status < 500) {
          throw new RespondFailed(`Slack refused the answer: ${reason}`, status);
        }
      } catch (error) {
        if (error instanceof RespondFailed) throw error;
        const timedOut = (error as { name?: string }).name === 'TimeoutError';
        reason = timedOut ? `no answer within ${policy.timeoutMs} ms` : 'Slack could not be reached';
      }
      const waitMs = retryAfterMs ?? policy.backoffMs * 2 ** (attempt - 1);
      if (attempt >= policy.attempts || waitMs > policy.maxRetryAfterMs) {
        throw new RespondFailed(`Slack did not take the answer after ${attempt} tries (${reason})`, status);
      }
      log.warn(
        { attempt, statusCode: status, reason, retryInMs: waitMs },
        'Slack did not take an answer to a command or click; trying again',
      );
      await sleep(waitMs);
    }
  }) as RespondFn;
}
