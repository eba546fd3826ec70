import type { webApi } from '@slack/bolt';

/** What Slack last answered a Web API call, as `/readyz` reports it. */
export interface SlackCallOutcome {
  /** The Web API method (`chat.update`), or `file upload` for a file's bytes. */
  method: string;
  ok: boolean;
  /** Why it failed: Slack's error code (`invalid_auth`), `http_503`, `timeout` or `unreachable`. */
  error?: string;
  /** The URL called, without credentials or query (a proxy in SLACK_API_URL may carry a password). */
  url?: string;
}

/** `href` without its user, password, query and fragment: what a log line or `/readyz` may show. */
export function shownUrl(href: string): string {
  try {
    const url = new URL(href);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.href;
  } catch {
    return '(not a URL)';
  }
}

/**
 * Slack's answers that say Slack cannot serve this bot now (its token, its workspace, or Slack
 * itself), not that one call was wrong (`channel_not_found` is Slack answering fine).
 */
const TROUBLE = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'team_disabled',
  'user_removed_from_team',
  'fatal_error',
  'internal_error',
  'service_unavailable',
  'request_timeout',
]);

/** Set on an error (or read from a header) so the retry log can name the method that failed. */
export const METHOD_TAG = 'slackMethod';
const METHOD_HEADER = 'x-queue-ops-slack-method';

type Fetch = NonNullable<webApi.WebClientOptions['fetch']>;
type FetchResponse = Awaited<ReturnType<Fetch>>;

/** The method a Web API URL calls (`…/api/chat.update`); undefined for anything else. */
export function webApiMethod(url: string): string | undefined {
  try {
    return /\/api\/([\w.]+)\/?$/.exec(new URL(url).pathname)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * What Slack last answered the bot's Web API calls, whichever client made them: every client the
 * bot builds fetches through `fetch()` here. `/readyz` reads `last()`; while it is a failure,
 * `recheck()` asks `auth.test` again (one at a time), so a bot that went quiet after Slack failed
 * does not stay unready once Slack answers again.
 */
export function createSlackHealth() {
  let last: SlackCallOutcome | undefined;
  let rechecking: Promise<void> | undefined;
  const record = (outcome: SlackCallOutcome) => {
    last = outcome;
  };

  return {
    record,
    last: (): SlackCallOutcome | undefined => last,
    /**
     * Runs `probe` (an `auth.test` through a client that fetches here) unless one is running;
     * its outcome is recorded by the fetch itself. Never rejects.
     */
    recheck(probe: () => Promise<unknown>): void {
      rechecking ??= probe()
        .catch(() => undefined)
        .then(() => {
          rechecking = undefined;
        });
    },
    /** Resolves when a running `recheck` is done (tests). */
    async idle(): Promise<void> {
      await rechecking;
    },
    /**
     * A fetch for WebClient (`clientOptions.fetch`) that records each Web API call's outcome, and
     * tags a failure with its method for the retry log. `inner` is read at call time (nock).
     */
    fetch(inner?: Fetch): Fetch {
      return async (input, init) => {
        const href = typeof input === 'string' ? input : input.href;
        const method = webApiMethod(href) ?? 'file upload';
        const isApi = method !== 'file upload';
        const url = shownUrl(href);
        let response: FetchResponse;
        try {
          response = await (inner ?? (globalThis.fetch as Fetch))(input, init);
        } catch (error) {
          const timedOut =
            error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
          if (isApi) record({ method, ok: false, error: timedOut ? 'timeout' : 'unreachable', url });
          tag(error, method);
          throw error;
        }
        // A 429 is Slack answering "later": the client waits and tries again, and that try's
        // outcome is what counts.
        if (response.status === 429) return response;
        if (response.status !== 200) {
          if (isApi) record({ method, ok: false, error: `http_${response.status}`, url });
          // WebClient turns this answer into an error of its own; a header carries the method.
          const headers = new Headers([...response.headers.entries()]);
          headers.set(METHOD_HEADER, method);
          return new Response(await response.arrayBuffer(), {
            status: response.status,
            statusText: response.statusText,
            headers,
          });
        }
        if (!isApi) return response;
        const bytes = await response.arrayBuffer();
        try {
          const body = JSON.parse(new TextDecoder().decode(bytes)) as { ok?: unknown; error?: unknown };
          const error = typeof body.error === 'string' ? body.error : 'unknown_error';
          record(
            body.ok === false && TROUBLE.has(error)
              ? { method, ok: false, error, url }
              : { method, ok: true, url },
          );
        } catch {
          record({ method, ok: false, error: 'unreadable_answer', url });
        }
        return new Response(bytes, {
          status: response.status,
          statusText: response.statusText,
          headers: new Headers([...response.headers.entries()]),
        });
      };
    },
  };
}

/** Marks a thrown error with the method it failed, for the retry log. */
function tag(error: unknown, method: string): void {
  if (error === null || typeof error !== 'object') return;
  try {
    Object.assign(error, { [METHOD_TAG]: method });
  } catch {
    // A frozen error: the retry log says `unknown` method.
  }
}

export type SlackHealth = ReturnType<typeof createSlackHealth>;

/** The method a failed attempt of WebClient's retry loop was calling, if it can be told. */
export function failedMethod(error: {
  original?: unknown;
  headers?: unknown;
  message?: unknown;
}): string | undefined {
  const tagged = (error.original as Record<string, unknown> | undefined)?.[METHOD_TAG];
  if (typeof tagged === 'string') return tagged;
  const header = (error.headers as Record<string, unknown> | undefined)?.[METHOD_HEADER];
  if (typeof header === 'string') return header;
  // A 429 waited out comes back as `A rate limit was exceeded (url: …/api/<method>, …)`.
  const quoted = /\(url: (\S+?),/.exec(String(error.original ?? error.message ?? ''));
  if (quoted?.[1]) return webApiMethod(quoted[1]) ?? 'file upload';
  return undefined;
}
