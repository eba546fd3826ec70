import { postJson } from './http.js';
import type { PageEvent, Pager } from './pager.js';

/** PagerDuty's Events API v2, for everyone who does not point `url` elsewhere. */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/**
 * PagerDuty through Events API v2: `trigger` opens (or joins) the incident of `dedup_key`,
 * `acknowledge` and `resolve` move it on. A trigger sent twice with one key is one incident.
 */
export function pagerDutyPager(
  settings: { name: string; routingKey: string; url?: string | undefined },
  fetchImpl?: typeof fetch,
): Pager {
  const url = settings.url ?? PAGERDUTY_EVENTS_URL;
  return {
    name: settings.name,
    type: 'pagerduty',
    async send(event: PageEvent) {
      const body =
        event.action === 'trigger'
          ? {
              routing_key: settings.routingKey,
              event_action: 'trigger',
              dedup_key: event.key,
              payload: {
                summary: event.summary.slice(0, 1024),
                source: event.source,
                severity: event.severity,
                component: event.source,
                custom_details: event.details,
              },
              client: 'queue-ops',
              ...(event.link ? { links: [event.link] } : {}),
            }
          : { routing_key: settings.routingKey, event_action: event.action, dedup_key: event.key };
      await postJson(url, body, {}, fetchImpl);
    },
  };
}
