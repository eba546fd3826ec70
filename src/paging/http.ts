import { PagerError } from './pager.js';

/** How long one call to a pager may take: the outbox's claim on a page (30 s) outlasts it. */
export const PAGER_TIMEOUT_MS = 10_000;

/** `Retry-After` in milliseconds: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 3600) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), 3_600_000);
}

/**
 * POSTs JSON to a pager; resolves on 2xx. 400/401/403 are a refusal (`PagerError.refused`), the
 * rest (429, 5xx, a timeout, no answer) may be tried again. The reason never holds the key: only
 * the status and the service's own short error.
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  fetchImpl: typeof fetch = fetch,
): Promise<void> {
  let response: Response;
  try {
    response = await fetchImpl(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(PAGER_TIMEOUT_MS),
    });
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    throw new PagerError(name === 'TimeoutError' ? 'timeout' : 'no answer', false);
  }
  if (response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const text = (await response.text().catch(() => '')).slice(0, 500);
  const said = serviceError(text);
  const reason = `HTTP ${response.status}${said ? `: ${said}` : ''}`;
  const refused = response.status === 400 || response.status === 401 || response.status === 403;
  throw new PagerError(reason, refused, retryAfterMs(response.headers.get('retry-after')));
}

/** The service's short error from its JSON body (`message`, `errors[0]`), one line, 120 characters. */
function serviceError(text: string): string | undefined {
  try {
    const json = JSON.parse(text) as { message?: unknown; errors?: unknown };
    const first = Array.isArray(json.errors) ? json.errors[0] : undefined;
    const said =
      typeof json.message === 'string' ? json.message : typeof first === 'string' ? first : undefined;
    return said?.replace(/\s+/g, ' ').slice(0, 120);
  } catch {
    return undefined;
  }
}
