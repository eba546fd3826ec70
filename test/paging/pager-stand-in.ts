import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the stand-in received it. */
export interface PagerRequest {
  service: 'pagerduty' | 'jsm';
  path: string;
  authorization?: string;
  body: Record<string, unknown>;
}

/** What the stand-in keeps per dedup key (PagerDuty) or alias (JSM), as the service would. */
export interface StandInIncident {
  service: 'pagerduty' | 'jsm';
  key: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  /** Triggers folded into this incident (a resend with the same key is not a new one). */
  triggers: number;
}

/**
 * PagerDuty's Events API v2 (`POST /v2/enqueue`) and JSM's alert API (`POST /jsm/v2/alerts`,
 * `…/<alias>/acknowledge|close`) on one loopback port, counting what arrives. Like the services, a
 * trigger with a key already open joins its incident; a key the stand-in does not know is refused
 * (PagerDuty 400, JSM 401). `answerNext` scripts the next answers (a 429 with `Retry-After`, a
 * 503), `holdNext` takes the next request and never answers it (the sender dies mid-call).
 */
export async function startPagerStandIn(keys: { routingKey: string; apiKey: string }) {
  const requests: PagerRequest[] = [];
  const incidents = new Map<string, StandInIncident>();
  const scripted: { status: number; headers?: Record<string, string> }[] = [];
  const held: ServerResponse[] = [];
  let holdNext = false;
  let onHeld: (() => void) | undefined;

  function apply(service: 'pagerduty' | 'jsm', key: string, action: 'trigger' | 'acknowledge' | 'resolve') {
    const open = incidents.get(`${service}|${key}`);
    if (action === 'trigger') {
      if (open && open.status !== 'resolved') open.triggers++;
      else incidents.set(`${service}|${key}`, { service, key, status: 'triggered', triggers: 1 });
    } else if (open && open.status !== 'resolved') {
      open.status = action === 'acknowledge' ? 'acknowledged' : 'resolved';
    }
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += String(chunk);
    });
    req.on('end', () => {
      const path = req.url ?? '';
      const service = path.startsWith('/jsm/') ? 'jsm' : 'pagerduty';
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      const request: PagerRequest = {
        service,
        path,
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        body,
      };
      requests.push(request);
      if (holdNext) {
        holdNext = false;
        held.push(res);
        onHeld?.();
        return;
      }
      const next = scripted.shift();
      if (next) {
        res.writeHead(next.status, { 'Content-Type': 'application/json', ...next.headers });
        res.end(JSON.stringify({ status: 'error', message: 'scripted' }));
        return;
      }
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (service === 'pagerduty') {
        if (body.routing_key !== keys.routingKey)
          return json(400, {
            status: 'invalid event',
            message: 'Event object is invalid',
            errors: ['Invalid routing key'],
          });
        apply(
          'pagerduty',
          String(body.dedup_key),
          body.event_action as 'trigger' | 'acknowledge' | 'resolve',
        );
        return json(202, { status: 'success', dedup_key: body.dedup_key });
      }
      if (req.headers.authorization !== `GenieKey ${keys.apiKey}`)
        return json(401, { message: 'Could not authenticate' });
      const match = /^\/jsm\/v2\/alerts(?:\/([^/?]+)\/(acknowledge|close))?/.exec(path);
      if (!match) return json(404, { message: 'no such path' });
      if (match[1] === undefined) apply('jsm', String(body.alias), 'trigger');
      else apply('jsm', decodeURIComponent(match[1]), match[2] === 'close' ? 'resolve' : 'acknowledge');
      return json(202, { result: 'Request will be processed', requestId: 'r-1' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;

  return {
    pagerDutyUrl: `${base}/v2/enqueue`,
    jsmUrl: `${base}/jsm/v2/alerts`,
    requests,
    incidents,
    /** PagerDuty's requests with this action (`trigger`…). */
    pagerDuty: (action?: string) =>
      requests.filter(
        (r) => r.service === 'pagerduty' && (action === undefined || r.body.event_action === action),
      ),
    jsm: () => requests.filter((r) => r.service === 'jsm'),
    answerNext(status: number, headers?: Record<string, string>) {
      scripted.push({ status, ...(headers ? { headers } : {}) });
    },
    /** Takes the next request and never answers; resolves once it has arrived. */
    holdNext(): Promise<void> {
      holdNext = true;
      return new Promise((resolve) => {
        onHeld = resolve;
      });
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type PagerStandIn = Awaited<ReturnType<typeof startPagerStandIn>>;

/** A PagerDuty v3 webhook delivery for `key`, and its `X-PagerDuty-Signature` under `secret`. */
export function pagerDutyDelivery(
  type: 'incident.acknowledged' | 'incident.resolved',
  key: string,
  secret: string,
  options: { eventId?: string; user?: { id: string; name: string } } = {},
) {
  const user = options.user ?? { id: 'PJANE01', name: 'Jane Doe' };
  const raw = Buffer.from(
    JSON.stringify({
      event: {
        id: options.eventId ?? `01EV${type.length}${key.slice(-6)}`,
        event_type: type,
        resource_type: 'incident',
        occurred_at: '2030-03-01T09:20:00.000Z',
        agent: { id: user.id, summary: user.name, type: 'user_reference' },
        data: {
          id: 'PINC001',
          type: 'incident',
          incident_key: key,
          status: type === 'incident.acknowledged' ? 'acknowledged' : 'resolved',
          title: 'backlog on pushizo/dispatch-ios',
        },
      },
    }),
  );
  const signature = `v1=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  return { raw, signature };
}
