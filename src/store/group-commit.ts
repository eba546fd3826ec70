import type Database from 'better-sqlite3';

/** One write waiting for the next group commit. */
interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/** A write that joins the next group commit; `flush()` commits what waits now (before a close). */
export interface GroupCommit<I, O> {
  (item: I): Promise<O>;
  flush(): void;
}

/**
 * How long the first write of a group waits for others when a commit was made less than this
 * long ago. Requests of a burst reach their write a few turns of the event loop apart (accept,
 * read, parse, verify); committing at the end of each turn caught one at a time, and every fsync
 * in between held the next ones up.
 */
export const GROUP_WINDOW_MS = 10;

/**
 * Writes made within a few milliseconds of the event loop, committed in one transaction.
 *
 * With `synchronous=FULL` every commit is an fsync, and better-sqlite3 runs it on the main thread:
 * 4 ms on a quiet disk, 30 ms and more on a busy VM, during which nothing else runs. Two hundred
 * slash commands arriving together each wrote their signature (and later their audit entry) in a
 * commit of its own, so the last one was acknowledged only after two hundred fsyncs, seconds past
 * Slack's 3 s. Here they share one: everything queued until the next commit (at the end of this
 * turn of the event loop, or `windowMs` after the first write when the last commit was less than
 * `windowMs` ago) is written in one `BEGIN IMMEDIATE` transaction, and each caller is answered
 * once it committed.
 *
 * `write` must be atomic on its own (one statement, or a `db.transaction`, which nests as a
 * savepoint): a write that throws fails alone and the others still commit. If the commit itself
 * fails (the file busy past `busy_timeout`, the disk full), nothing was written and every caller
 * of the group gets the error, mapped by `toError`.
 */
export function groupCommit<I, O>(
  db: Database.Database,
  write: (item: I) => O,
  toError: (error: unknown) => unknown = (error) => error,
  windowMs = GROUP_WINDOW_MS,
): GroupCommit<I, O> {
  let queue: Pending<I, O>[] = [];
  let scheduled: NodeJS.Timeout | undefined;

  let lastFlush = Number.NEGATIVE_INFINITY;
  const flush = () => {
    lastFlush = performance.now();
    if (scheduled) clearTimeout(scheduled);
    scheduled = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: O } | { ok: false; error: unknown })[] = [];
    try {
      db.transaction(() => {
        for (const pending of batch) {
          try {
            outcomes.push({ ok: true, value: write(pending.item) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      for (const pending of batch) pending.reject(toError(error));
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(toError(outcome.error));
    });
  };

  const enqueue = (item: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      // A write with no other commit close before it (the command line, a quiet bot) goes at the
      // end of this turn; during a burst, the next commit waits for the window to fill.
      scheduled ??= setTimeout(flush, performance.now() - lastFlush < windowMs ? windowMs : 0);
    });
  return Object.assign(enqueue, { flush });
}
