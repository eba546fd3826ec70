import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether one of the `v1=<hex>` signatures of `X-PagerDuty-Signature` (several, comma-separated,
 * while PagerDuty rotates the secret) is the HMAC-SHA256 of the raw body under `secret`.
 */
export function verifyPagerDutySignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header || secret === '') return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  return header.split(',').some((part) => {
    const match = /^\s*v1=([0-9a-fA-F]{64})\s*$/.exec(part);
    if (!match) return false;
    const given = Buffer.from(match[1]!, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** What queue-ops reads of a PagerDuty v3 webhook delivery. */
export interface PagerDutyWebhookEvent {
  id: string;
  /** `incident.acknowledged`, `incident.resolved`, … */
  type: string;
  /** The incident's key: the Events API's `dedup_key` of the page. */
  incidentKey?: string;
  /** The user who acted. */
  agent?: { id: string; name: string };
  occurredAt?: string;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The event of a v3 delivery (`{ event: { id, event_type, agent, data } }`); undefined when it is not one. */
export function parsePagerDutyWebhook(raw: Buffer): PagerDutyWebhookEvent | undefined {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  const event = (body as { event?: Record<string, unknown> } | null)?.event;
  if (!event || typeof event !== 'object') return undefined;
  const id = text(event.id);
  const type = text(event.event_type);
  if (!id || !type) return undefined;
  const data = (event.data ?? {}) as Record<string, unknown>;
  const agent = (event.agent ?? {}) as Record<string, unknown>;
  const agentId = text(agent.id);
  const incidentKey = text(data.incident_key);
  const occurredAt = text(event.occurred_at);
  return {
    id,
    type,
    ...(incidentKey ? { incidentKey } : {}),
    ...(agentId ? { agent: { id: agentId, name: text(agent.summary) ?? agentId } } : {}),
    ...(occurredAt ? { occurredAt } : {}),
  };
}
