import { endpointDb } from '../redis-endpoint.js';
/**
 * Key and channel names of kombu's Redis transport (kombu 5.2.4 `transport/redis.py`), so that
 * every other file in this folder agrees on them. See queue-wire-formats.md, A0–A4 and A9.
 */

/** The transport options of one Celery system that decide where things live in Redis. */
export interface KombuLayout {
  /** kombu's `global_keyprefix`: prepended to every key and pub/sub channel. */
  globalKeyprefix: string;
  /** kombu's `priority_steps`, in the order a worker's BRPOP lists them. */
  prioritySteps: readonly number[];
  /** kombu's `sep`, used in priority list names and in binding members. */
  separator: string;
  /** kombu's `fanout_prefix`: true → `/<db>.`, false → none, a string → itself. */
  fanoutPrefix: boolean | string;
  /** The numeric DB of the broker URL; pub/sub ignores SELECT, so kombu puts it in channel names. */
  db: number;
}

/**
 * The Redis lists that hold one queue's waiting messages, highest priority first (on Redis a lower
 * step is served first): `q`, `q\x06\x163`, `q\x06\x166`, `q\x06\x169` with the default steps.
 */
export function priorityKeys(layout: KombuLayout, queue: string): string[] {
  const steps = [...new Set(layout.prioritySteps)].sort((a, b) => a - b);
  return steps.map((step) =>
    step === 0
      ? `${layout.globalKeyprefix}${queue}`
      : `${layout.globalKeyprefix}${queue}${layout.separator}${step}`,
  );
}

/** The SCAN pattern that finds every exchange's binding set. */
export function bindingScanPattern(layout: KombuLayout): string {
  return `${escapeGlob(layout.globalKeyprefix)}_kombu.binding.*`;
}

/** The exchange name of a binding key, or undefined when the key is not one. */
export function exchangeOfBindingKey(layout: KombuLayout, key: string): string | undefined {
  const head = `${layout.globalKeyprefix}_kombu.binding.`;
  return key.startsWith(head) ? key.slice(head.length) : undefined;
}

/**
 * Exchanges that Celery uses for its own plumbing, not for tasks: the pidbox request and reply
 * exchanges and the event exchange.
 */
export function isInternalExchange(exchange: string): boolean {
  return exchange.endsWith('.pidbox') || exchange === 'celeryev' || exchange.startsWith('celeryev.');
}

/** Queues that are plumbing too: worker mailboxes, reply queues and event receivers. */
export function isInternalQueue(queue: string): boolean {
  return queue.endsWith('.pidbox') || queue.startsWith('celeryev.');
}

/** The queue a binding member routes to: the third field of `routing_key sep pattern sep queue`. */
export function queueOfBindingMember(layout: KombuLayout, member: string): string | undefined {
  const fields = member.split(layout.separator);
  return fields.length >= 3 ? fields.slice(2).join(layout.separator) : undefined;
}

/** `redis://h:6379/3` → 3; kombu fills `{db}` in the fanout prefix with this number. */
export function dbFromUrl(url: string): number {
  return endpointDb(url);
}

/** The channel workers PSUBSCRIBE for remote control: `{P}/{db}.celery.pidbox` by default. */
export function pidboxChannel(layout: KombuLayout, exchange = 'celery.pidbox'): string {
  const fanout =
    layout.fanoutPrefix === true
      ? `/${layout.db}.`
      : layout.fanoutPrefix === false
        ? ''
        : layout.fanoutPrefix;
  return `${layout.globalKeyprefix}${fanout}${exchange}`;
}

/** The binding set the reply exchange is resolved through; a reply without our member is dropped. */
export function replyBindingKey(layout: KombuLayout, exchange = 'reply.celery.pidbox'): string {
  return `${layout.globalKeyprefix}_kombu.binding.${exchange}`;
}

/** Global unacked hash (`QoS.unacked_key`): one field per message a worker holds. */
export function unackedKey(layout: KombuLayout): string {
  return `${layout.globalKeyprefix}unacked`;
}

/**
 * queue-ops' own hash of the queues it paused: field = queue name, value = JSON
 * `{"at": ISO time, "workers": [node names]}`. The only key queue-ops writes in a broker.
 *
 * It lives in the broker Redis because Celery has no pause flag to read, and this is the one
 * place every replica of the bot and the CLI already reach for that system (the bot's own store
 * is not reachable from the backend layer, and the CLI may run without one). Under the global
 * prefix so that a shared Redis keeps apps apart, and outside kombu's names (`_kombu.*`, queue
 * lists), so neither kombu nor our discovery ever takes it for a queue.
 */
export function pausedKey(layout: KombuLayout): string {
  return `${layout.globalKeyprefix}queue-ops:paused`;
}

/** Celery's result key prefix. 5.2.6 ignores global_keyprefix for the result backend. */
export const RESULT_KEY_PREFIX = 'celery-task-meta-';

/**
 * The member queue-ops appends to a FAILURE it retried, naming the new task id. Celery ignores
 * members it does not know; the failure and its traceback stay readable until `result_expires`,
 * and the failure index no longer counts it as a dead letter.
 */
export const RETRIED_AS_FIELD = 'queue_ops_retried_as';

/**
 * The list a message of `priority` goes to: kombu's `_q_for_pri` over `Channel.priority(n)`,
 * i.e. the highest step not above the priority (0–2 → 0, 3–5 → 3…), clamped to 0..9.
 */
export function priorityListFor(layout: KombuLayout, queue: string, priority: number): string {
  const steps = [...new Set(layout.prioritySteps)].sort((a, b) => a - b);
  const clamped = Math.min(9, Math.max(0, Math.floor(Number.isFinite(priority) ? priority : 0)));
  let step = steps[0] ?? 0;
  for (const s of steps) if (s <= clamped) step = s;
  return step === 0
    ? `${layout.globalKeyprefix}${queue}`
    : `${layout.globalKeyprefix}${queue}${layout.separator}${step}`;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
