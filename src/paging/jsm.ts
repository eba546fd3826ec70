import { postJson } from './http.js';
import type { PageEvent, Pager } from './pager.js';

/** Jira Service Management's alert API (Opsgenie's successor), for an API integration's key. */
export const JSM_ALERTS_URL = 'https://api.atlassian.com/jsm/ops/integration/v2/alerts';

const PRIORITY = { critical: 'P1', warning: 'P3', info: 'P5' } as const;

/**
 * JSM alerts: created with the page's key as `alias` (a second create with one alias is one
 * alert), then acknowledged and closed by that alias. Authorised with `GenieKey <apiKey>`.
 */
export function jsmPager(
  settings: { name: string; apiKey: string; url?: string | undefined },
  fetchImpl?: typeof fetch,
): Pager {
  const base = (settings.url ?? JSM_ALERTS_URL).replace(/\/+$/, '');
  const headers = { Authorization: `GenieKey ${settings.apiKey}` };
  return {
    name: settings.name,
    type: 'jsm',
    async send(event: PageEvent) {
      if (event.action === 'trigger') {
        const details = Object.fromEntries(
          Object.entries(event.details).map(([k, v]) => [k, v === null ? '' : String(v)]),
        );
        await postJson(
          base,
          {
            message: event.summary.slice(0, 130),
            alias: event.key,
            description: event.link ? `${event.summary}\n${event.link.href}` : event.summary,
            source: 'queue-ops',
            entity: event.source,
            priority: PRIORITY[event.severity],
            details: event.link ? { ...details, slack: event.link.href } : details,
          },
          headers,
          fetchImpl,
        );
        return;
      }
      const verb = event.action === 'acknowledge' ? 'acknowledge' : 'close';
      await postJson(
        `${base}/${encodeURIComponent(event.key)}/${verb}?identifierType=alias`,
        { source: 'queue-ops', user: 'queue-ops' },
        headers,
        fetchImpl,
      );
    },
  };
}
