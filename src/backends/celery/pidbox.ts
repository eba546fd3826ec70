import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ensureConnected } from '../redis-client.js';
import { type KombuLayout, pidboxChannel, priorityKeys, replyBindingKey } from './keys.js';

/** One worker's answer to a remote-control command. */
export interface PidboxReply {
  /** The worker's node name, e.g. `celery@host`. */
  worker: string;
  /** What the worker returned: `{ok: …}`, `{error: …}`, a list (active) or an object (stats). */
  reply: unknown;
}

export interface BroadcastOptions {
  /** How long to wait for replies. */
  timeoutMs: number;
  /** Node names to address (`["celery@host1"]`); every worker when omitted. */
  destination?: readonly string[];
  /** Set false for a cast: nothing is waited for and no reply queue is made. */
  reply?: boolean;
}

export interface BroadcastResult {
  replies: PidboxReply[];
  /** What PUBLISH returned: how many workers were subscribed when the request went out. */
  receivers: number;
}

/**
 * Celery's remote control over Redis (kombu `pidbox.Mailbox` + `celery.app.control`), the way
 * `celery inspect` and `celery control` do it, so workers need nothing installed for us.
 */
export interface PidboxClient {
  /**
   * Sends `method` with `args` to the workers and collects their replies until `timeoutMs`
   * passes or as many workers answered as PUBLISH said were listening.
   */
  broadcast(
    method: string,
    args: Record<string, unknown>,
    options: BroadcastOptions,
  ): Promise<BroadcastResult>;
  close(): Promise<void>;
}

export interface PidboxClientDeps {
  /** A connection for ordinary commands (SADD, PUBLISH, SREM, DEL). */
  client: Redis;
  /**
   * Makes a connection for BRPOP, which blocks the connection it runs on; its command timeout must
   * be longer than one second (the longest single BRPOP we issue).
   */
  createBlockingClient: () => Redis;
  layout: KombuLayout;
  /** kombu's `control_exchange`; `celery` unless the app changed it. */
  namespace?: string;
  now?: () => number;
  /** Default 2 s. */
  connectTimeoutMs?: number;
}

/** Idle blocking connections kept for the next broadcast. */
const MAX_IDLE_BLOCKING = 4;
/** One BRPOP waits at most this long, so a closed client is noticed quickly. */
const MAX_BRPOP_MS = 1000;

/**
 * A control request as kombu's Redis transport publishes it to the pidbox exchange; with
 * `replyTo`, the workers answer to that exchange and routing key with our ticket.
 */
function requestEnvelope(
  method: string,
  args: Record<string, unknown>,
  destination: readonly string[] | undefined,
  to: {
    requestExchange: string;
    replyTo: { exchange: string; routing_key: string; ticket: string } | undefined;
    deadline: number;
  },
) {
  const body: Record<string, unknown> = {
    method,
    arguments: args,
    destination: destination?.length ? [...destination] : null,
    pattern: null,
    matcher: null,
  };
  if (to.replyTo) {
    body.ticket = to.replyTo.ticket;
    body.reply_to = { exchange: to.replyTo.exchange, routing_key: to.replyTo.routing_key };
  }
  return {
    body: Buffer.from(JSON.stringify(body), 'utf8').toString('base64'),
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    // Workers drop a request whose `expires` passed, so a slow worker does not act on it late.
    headers: { clock: 1, expires: to.deadline / 1000 },
    properties: {
      delivery_mode: 2,
      delivery_info: { exchange: to.requestExchange, routing_key: '' },
      priority: 0,
      body_encoding: 'base64',
      delivery_tag: randomUUID(),
    },
  };
}

export function createPidboxClient(deps: PidboxClientDeps): PidboxClient {
  const { client, layout } = deps;
  const now = deps.now ?? Date.now;
  const namespace = deps.namespace ?? 'celery';
  const connectTimeoutMs = deps.connectTimeoutMs ?? 2000;
  const requestExchange = `${namespace}.pidbox`;
  const replyExchange = `reply.${namespace}.pidbox`;
  const channel = pidboxChannel(layout, requestExchange);
  const bindingKey = replyBindingKey(layout, replyExchange);
  const idle: Redis[] = [];
  const busy = new Set<Redis>();
  let closed = false;
  // Redis < 6 only takes whole seconds; found out on the first BRPOP that says so.
  let wholeSecondsOnly = false;

  async function acquire(): Promise<Redis> {
    const blocking = idle.pop() ?? deps.createBlockingClient();
    busy.add(blocking);
    try {
      await ensureConnected(blocking, connectTimeoutMs);
    } catch (error) {
      busy.delete(blocking);
      blocking.disconnect();
      throw error;
    }
    return blocking;
  }

  function release(blocking: Redis, healthy: boolean): void {
    busy.delete(blocking);
    if (healthy && !closed && idle.length < MAX_IDLE_BLOCKING && blocking.status === 'ready')
      idle.push(blocking);
    else blocking.disconnect();
  }

  async function brpop(blocking: Redis, keys: string[], waitMs: number): Promise<[string, string] | null> {
    const seconds = wholeSecondsOnly ? Math.max(1, Math.round(waitMs / 1000)) : Math.max(waitMs, 10) / 1000;
    try {
      return await blocking.brpop(...keys, seconds);
    } catch (error) {
      if (!wholeSecondsOnly && /timeout is not an integer/i.test(String((error as Error)?.message))) {
        wholeSecondsOnly = true;
        return await brpop(blocking, keys, waitMs);
      }
      throw error;
    }
  }

  async function broadcast(
    method: string,
    args: Record<string, unknown>,
    options: BroadcastOptions,
  ): Promise<BroadcastResult> {
    if (closed) throw new Error('pidbox client is closed');
    await ensureConnected(client, connectTimeoutMs);
    const wantReply = options.reply !== false;
    const started = now();
    const deadline = started + options.timeoutMs;
    const oid = randomUUID();
    const ticket = randomUUID();
    const replyQueue = `${oid}.${replyExchange}`;
    // kombu's binding member: routing_key sep pattern sep queue
    const member = `${oid}${layout.separator}${layout.separator}${replyQueue}`;
    const replyKeys = priorityKeys(layout, replyQueue);
    const envelope = requestEnvelope(method, args, options.destination, {
      requestExchange,
      replyTo: wantReply ? { exchange: replyExchange, routing_key: oid, ticket } : undefined,
      deadline,
    });

    if (!wantReply) {
      const receivers = await client.publish(channel, JSON.stringify(envelope));
      return { replies: [], receivers };
    }

    let blocking: Redis | undefined;
    let healthy = true;
    const replies: PidboxReply[] = [];
    let receivers = 0;
    try {
      // Without the binding the worker's reply is routed nowhere and silently dropped. One
      // connection runs a pipeline in order, so the binding exists before the request goes out,
      // and the two cost one round trip.
      const sent =
        (await client
          .pipeline()
          .sadd(bindingKey, member)
          .publish(channel, JSON.stringify(envelope))
          .exec()) ?? [];
      for (const [error] of sent) if (error) throw error;
      receivers = Number(sent[1]?.[1] ?? 0);
      const expected = options.destination?.length
        ? Math.min(options.destination.length, receivers)
        : receivers;
      if (expected > 0) {
        blocking = await acquire();
        while (replies.length < expected && !closed) {
          const remaining = deadline - now();
          if (remaining <= 0) break;
          const popped = await brpop(blocking, replyKeys, Math.min(remaining, MAX_BRPOP_MS));
          if (!popped) continue;
          const parsed = parseReply(popped[1], ticket);
          if (parsed) replies.push(...parsed);
        }
      }
    } catch (error) {
      healthy = false;
      throw error;
    } finally {
      if (blocking) release(blocking, healthy);
      // Best effort: the reply list must not outlive us, and the binding set must not grow.
      await client
        .multi()
        .srem(bindingKey, member)
        .del(...replyKeys)
        .exec()
        .catch(() => undefined);
    }
    return { replies, receivers };
  }

  return {
    broadcast,
    async close() {
      closed = true;
      for (const blocking of [...idle, ...busy]) blocking.disconnect();
      idle.length = 0;
      busy.clear();
    },
  };
}

/** The replies in one reply envelope that answer our ticket; anything else is ignored. */
export function parseReply(raw: string, ticket: string): PidboxReply[] | undefined {
  let envelope: {
    body?: unknown;
    headers?: { ticket?: unknown };
    'content-type'?: unknown;
    properties?: { body_encoding?: unknown };
  };
  try {
    envelope = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (envelope?.headers?.ticket !== ticket) return undefined;
  if (envelope['content-type'] !== undefined && envelope['content-type'] !== 'application/json')
    return undefined;
  if (typeof envelope.body !== 'string') return undefined;
  let text = envelope.body;
  if (envelope.properties?.body_encoding === 'base64') text = Buffer.from(text, 'base64').toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  return Object.entries(body as Record<string, unknown>).map(([worker, reply]) => ({ worker, reply }));
}
