import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import type { Audit } from '../../audit/audit.js';
import type { AlertService } from '../../escalation/alerts.js';
import type { Logger } from '../../lib/logger.js';
import { parsePagerDutyWebhook, verifyPagerDutySignature } from '../../paging/webhook.js';

/** The path PagerDuty's v3 webhook subscription posts to. */
export const PAGERDUTY_WEBHOOK_PATH = '/pagerduty/webhook';

/** A webhook body is a few KB; anything past this is not PagerDuty's. */
const MAX_BODY_BYTES = 256 * 1024;

/** The events that change something in queue-ops; the rest (`pagey.ping`, …) are answered 200. */
const ANSWERS = { 'incident.acknowledged': 'acknowledge', 'incident.resolved': 'resolve' } as const;

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(`${JSON.stringify(body)}\n`);
}

export interface PagerDutyWebhookDeps {
  /** `PAGERDUTY_WEBHOOK_SECRET`; unset: every delivery is refused (401). */
  secret: string | undefined;
  alerts: Pick<AlertService, 'answerFromPagerDuty'>;
  audit: Pick<Audit, 'record'>;
  logger: Logger;
}

/**
 * What one delivery does: verified first (401 and nothing else when its signature is missing or
 * wrong), then an acknowledgement acknowledges the page's alerts in queue-ops and a resolution is
 * recorded on the page, each audited once: a replay finds it done, writes and audits nothing.
 */
export async function handlePagerDutyWebhook(
  deps: PagerDutyWebhookDeps,
  raw: Buffer,
  signature: string | undefined,
): Promise<{ status: number; body: Record<string, unknown> }> {
  if (!deps.secret || !verifyPagerDutySignature(raw, signature, deps.secret))
    return { status: 401, body: { ok: false, error: 'invalid signature' } };
  const event = parsePagerDutyWebhook(raw);
  if (!event) return { status: 400, body: { ok: false, error: 'not a PagerDuty v3 webhook event' } };
  const kind = ANSWERS[event.type as keyof typeof ANSWERS];
  if (!kind || !event.incidentKey) return { status: 200, body: { ok: true, changed: false } };
  const agent = event.agent ?? { id: 'unknown', name: 'PagerDuty' };
  const outcome = await deps.alerts.answerFromPagerDuty({
    key: event.incidentKey,
    kind,
    userId: agent.id,
    name: agent.name,
  });
  if (outcome.changed)
    await deps.audit.record({
      actorId: `pagerduty:${agent.id}`,
      actorName: agent.name,
      via: 'pagerduty',
      action: kind === 'acknowledge' ? 'alert.ack' : 'alert.page-resolved',
      target: outcome.alerts.map((a) => a.id).join(','),
      params: { event: event.id, key: event.incidentKey, alerts: outcome.alerts.map((a) => a.id) },
      outcome: 'done',
    });
  return { status: 200, body: { ok: true, found: outcome.found, changed: outcome.changed } };
}

/** `POST /pagerduty/webhook`, on the server of `/readyz` (`PORT`, or `METRICS_PORT` in Socket Mode). */
export function pagerDutyWebhookRoute(deps: PagerDutyWebhookDeps): CustomRoute {
  return {
    path: PAGERDUTY_WEBHOOK_PATH,
    method: ['POST'],
    handler: (req, res) => {
      void (async () => {
        try {
          const raw = await readBody(req);
          if (!raw) return answer(res, 413, { ok: false, error: 'body too large' });
          const header = req.headers['x-pagerduty-signature'];
          const signature = Array.isArray(header) ? header.join(',') : header;
          const { status, body } = await handlePagerDutyWebhook(deps, raw, signature);
          answer(res, status, body);
        } catch (error) {
          // PagerDuty delivers again after a failure: nothing was half-done (each write is whole).
          deps.logger.warn({ err: error }, 'a PagerDuty webhook delivery failed; PagerDuty retries it');
          if (!res.headersSent) answer(res, 500, { ok: false, error: 'failed' });
        }
      })();
    },
  };
}
