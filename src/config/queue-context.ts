/**
 * Who owns a queue and what to do about it: the context a system's `queues` entries may carry
 * (`{ name, owner, runbook, dashboard, notes }`), and the one lookup every view uses. Pure: no
 * I/O, no imports beyond types, so the schema can use it while it loads the config.
 */

/** What the config says about a queue, as `status`, `dlq`, `job` and alerts show it. */
export interface QueueContext {
  /** A Slack user group (`S…`) or user (`U…`/`W…`) id. */
  owner?: string;
  /** An `https:` URL. */
  runbook?: string;
  /** An `https:` URL. */
  dashboard?: string;
  /** The runbook table's "normal cause → typical fix". */
  notes?: string;
}

/** One `queues` entry written as an object; `name` may be a pattern with `*` (`dispatch-*`). */
export interface QueueEntry extends QueueContext {
  name: string;
}

/** A system's `queues` after loading: names for every consumer, patterns and context beside them. */
export interface NormalizedQueues {
  /** Exact queue names (no `*`); absent when the system lists none. */
  queues?: string[];
  /** Names with `*`: the discovered queues they match are the system's too. */
  queuePatterns?: string[];
  /** Entries that carry any context, exact names and patterns alike, in config order. */
  queueContext?: QueueEntry[];
}

const CONTEXT_KEYS = ['owner', 'runbook', 'dashboard', 'notes'] as const;

export function isQueuePattern(name: string): boolean {
  return name.includes('*');
}

/**
 * Splits `queues` as written (plain names and objects) into what the backends read (names and
 * patterns) and what the views read (context). Run once, when the config is loaded.
 */
export function normalizeQueues(entries: readonly (string | QueueEntry)[] | undefined): NormalizedQueues {
  if (entries === undefined) return {};
  const objects = entries.map((e) => (typeof e === 'string' ? { name: e } : e));
  const names = [...new Set(objects.filter((e) => !isQueuePattern(e.name)).map((e) => e.name))];
  const patterns = [...new Set(objects.filter((e) => isQueuePattern(e.name)).map((e) => e.name))];
  const context = objects
    .filter((e) => CONTEXT_KEYS.some((key) => e[key] !== undefined))
    .map((e) => ({ ...e }));
  return {
    ...(names.length > 0 ? { queues: names } : {}),
    ...(patterns.length > 0 ? { queuePatterns: patterns } : {}),
    ...(context.length > 0 ? { queueContext: context } : {}),
  };
}

/** `dispatch-*` against a queue name; `*` is the only wildcard, as in rules and silences. */
export function queuePatternMatches(pattern: string, queue: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === queue;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (queue.length < first.length + last.length || !queue.startsWith(first) || !queue.endsWith(last))
    return false;
  let at = first.length;
  const end = queue.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = queue.indexOf(middle, at);
    if (found === -1 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** Literal characters of a pattern: more of them is a narrower match (`dispatch-io*` over `dispatch-*`). */
function specificity(pattern: string): number {
  return pattern.replace(/\*/g, '').length;
}

/**
 * The context of one queue: the entry with its exact name, else the most specific pattern that
 * matches it (the most literal characters; the first written on a tie). Undefined when none says
 * anything about it.
 */
export function queueContextFor(
  entries: readonly QueueEntry[] | undefined,
  queue: string,
): QueueContext | undefined {
  if (!entries) return undefined;
  const exact = entries.find((e) => e.name === queue);
  let best = exact;
  if (!best) {
    for (const e of entries) {
      if (!isQueuePattern(e.name) || !queuePatternMatches(e.name, queue)) continue;
      if (!best || specificity(e.name) > specificity(best.name)) best = e;
    }
  }
  if (!best) return undefined;
  const context: QueueContext = {};
  for (const key of CONTEXT_KEYS) if (best[key] !== undefined) context[key] = best[key];
  return context;
}

/** A system's queue context by name, for views that hold the whole config. */
export function contextOfQueue(
  systems: readonly { name: string; queueContext?: readonly QueueEntry[] }[],
  system: string,
  queue: string | undefined,
): QueueContext | undefined {
  if (queue === undefined) return undefined;
  return queueContextFor(systems.find((s) => s.name === system)?.queueContext, queue);
}
