import { queuePatternMatches } from '../config/queue-context.js';
import { ErrorCode, OpsError } from '../errors.js';
import { suggest } from '../lib/suggest.js';

/** An UnknownQueue answer names at most this many valid queues. */
const VALID_LISTED = 20;
const RESCAN_AFTER_MS = 5_000;

export interface QueueNamesOptions {
  system: string;
  /** The queues from config; discovery is not used when they are given (and no patterns are). */
  configured?: readonly string[];
  /**
   * Patterns from config (`dispatch-*`): the discovered queues they match belong to the system
   * too, beside the configured names. With patterns, discovery runs and keeps only those.
   */
  patterns?: readonly string[];
  /** A full discovery (a SCAN of the keyspace): the expensive part this object rations. */
  discover: () => Promise<string[]>;
  now: () => number;
  /**
   * How long a discovery is fresh. After that the next call still answers at once from it and
   * starts the next discovery in the background: only the very first call waits for a SCAN, so a
   * status read (and a monitor tick) is never held up by one.
   */
  ttlMs: number;
  /** A name missing from a discovery younger than this is unknown without scanning again. Default 5 s. */
  rescanAfterMs?: number;
}

/** The queues of one system, discovered at most once per TTL, and checks of asked-for names. */
export interface QueueNames {
  /**
   * Sorted; from config, or the latest discovery (refreshed in the background once older than
   * the TTL), or a discovery waited for when there is none yet or `fresh` asks for one.
   */
  list(fresh?: boolean): Promise<string[]>;
  /**
   * The asked-for names without repeats, or UnknownQueue (with valid names and a did-you-mean)
   * for the first one that does not exist. A name not seen yet is looked for again with a fresh
   * discovery, but not more than once per `rescanAfterMs`, so that typos in a loop do not SCAN the
   * keyspace each time.
   */
  resolve(asked: readonly string[]): Promise<string[]>;
  /**
   * The list, as `list()`, except that when one of `asked` is not in it, a name discovery has not
   * seen is looked for at once: a fresh discovery, at most once per `rescanAfterMs`. So a queue
   * created after the last discovery is found by the first command that names it.
   */
  lookFor(asked: readonly string[]): Promise<string[]>;
}

export function createQueueNames(options: QueueNamesOptions): QueueNames {
  const { now } = options;
  const patterns = options.patterns && options.patterns.length > 0 ? options.patterns : undefined;
  // Only names: the list is the config's, and nothing is ever scanned.
  const configured = patterns ? undefined : options.configured;
  /** What a discovery keeps: everything, or the configured names and what the patterns match. */
  const keep = (found: readonly string[]): string[] => {
    if (!patterns) return [...found].sort();
    const named = new Set(options.configured ?? []);
    const matched = found.filter((q) => named.has(q) || patterns.some((p) => queuePatternMatches(p, q)));
    return [...new Set([...matched, ...named])].sort();
  };
  let discovered: { at: number; queues: string[] } | undefined;
  let discovering: Promise<string[]> | undefined;

  /** Concurrent callers (and the background refresh) share one discovery of the keyspace. */
  function discover(): Promise<string[]> {
    discovering ??= options
      .discover()
      .then((queues) => {
        discovered = { at: now(), queues: keep(queues) };
        return discovered.queues;
      })
      .finally(() => {
        discovering = undefined;
      });
    return discovering;
  }

  async function list(fresh = false): Promise<string[]> {
    if (configured) return [...configured].sort();
    if (!fresh && discovered) {
      // Stale: answer from it now, and let the next call see what the background SCAN found.
      // A failed refresh (Redis down) keeps the old names; the status read itself says why.
      if (now() - discovered.at >= options.ttlMs) void discover().catch(() => undefined);
      return discovered.queues;
    }
    return await discover();
  }

  async function lookFor(asked: readonly string[]): Promise<string[]> {
    const valid = await list();
    const stale = !discovered || now() - discovered.at >= (options.rescanAfterMs ?? RESCAN_AFTER_MS);
    if (!configured && stale && asked.some((q) => !valid.includes(q))) return await list(true);
    return valid;
  }

  async function resolve(asked: readonly string[]): Promise<string[]> {
    const valid = await lookFor(asked);
    for (const queue of asked) {
      if (!valid.includes(queue)) {
        throw new OpsError(ErrorCode.UnknownQueue, {
          system: options.system,
          queue,
          valid: valid.slice(0, VALID_LISTED),
          suggestion: suggest(queue, valid),
        });
      }
    }
    return [...new Set(asked)];
  }

  return { list, resolve, lookFor };
}
