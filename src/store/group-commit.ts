import type Database from 'better-sqlite3';

/** One write waiting for the next group commit. */
interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs `fn` (its own commits) with `synchronous=NORMAL`, then the connection is back at FULL: in
 * WAL mode such a commit is written to the WAL but not fsynced, so it survives the process but
 * maybe not a power cut, and it is as visible to other connections as any other. Per connection
 * and outside any transaction; a later FULL commit (an audit entry, an alert) fsyncs the WAL, and
 * so whatever NORMAL commits came before it, so their durability is never less than it was.
 */
export function unsynced(db: Database.Database): <T>(fn: () => T) => T {
  let normal: Database.Statement | undefined;
  let full: Database.Statement | undefined;
  return (fn) => {
    normal ??= db.prepare('PRAGMA synchronous = NORMAL');
    full ??= db.prepare('PRAGMA synchronous = FULL');
    normal.run();
    try {
      return fn();
    } finally {
      full.run();
    }
  };
}

/** A write that joins the next group commit; `flush()` commits what waits now (before a close). */
export interface GroupCommit<I, O> {
  (item: I): Promise<O>;
  /** Commits what waits now with `synchronous=FULL`, on this thread (before a close). */
  flush(): void;
}

export interface GroupCommitOptions {
  /** Maps an error of the commit or of one write to what its caller gets. */
  toError?: (error: unknown) => unknown;
  /**
   * Makes the commits made so far durable off the event loop (`walSync(path).sync`). With it, a
   * group commits with `synchronous=NORMAL` (written to the WAL, not synced) and its callers are
   * answered once this resolves; without it (`:memory:`), with the connection's own setting.
   */
  durable?: () => Promise<void>;
}

/**
 * Writes made in one turn of the event loop, committed in one transaction and made durable by one
 * fsync that runs off the event loop.
 *
 * With `synchronous=FULL` every commit is an fsync, and better-sqlite3 runs it on the main thread:
 * 4 ms on a quiet disk, 30 ms and more on a busy VM, during which nothing else runs, not even the
 * acknowledgement of the next Slack request. Two hundred slash commands arriving together each
 * write their signature (after the ack) and an audit entry (before the answer). Here the writes
 * queued in one turn (everything read from the sockets before the loop's check phase) are written
 * in one `BEGIN IMMEDIATE` transaction at `synchronous=NORMAL`, which costs a write to the WAL and
 * no fsync; `durable` then fsyncs the WAL on libuv's thread pool, and each caller is answered only
 * after that. Commits made while an fsync runs share the next one, so the number of fsyncs follows
 * the disk, not the number of commands, and the loop keeps reading requests meanwhile.
 *
 * `write` must be atomic on its own (one statement, or a `db.transaction`, which nests as a
 * savepoint): a write that throws fails alone and the others still commit. If the commit itself
 * fails (the file busy past `busy_timeout`, the disk full), nothing was written and every caller
 * of the group gets the error, mapped by `toError`; so does every caller of a group whose fsync
 * failed (committed, but not known to be on disk).
 */
export function groupCommit<I, O>(
  db: Database.Database,
  write: (item: I) => O,
  options: GroupCommitOptions = {},
): GroupCommit<I, O> {
  const toError = options.toError ?? ((error: unknown) => error);
  const durable = options.durable;
  let queue: Pending<I, O>[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const withoutSync = unsynced(db);

  const commit = (deferSync: boolean) => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: O } | { ok: false; error: unknown })[] = [];
    const run = () =>
      db
        .transaction(() => {
          for (const pending of batch) {
            try {
              outcomes.push({ ok: true, value: write(pending.item) });
            } catch (error) {
              // One write refused (its savepoint rolled back) leaves the others; an error that
              // rolled back the whole transaction (SQLITE_FULL can) fails the whole group, or the
              // writes after it would commit on their own while every caller is told they failed.
              if (!db.inTransaction) throw error;
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
    try {
      // Unsynced here, made durable by `durable` off the event loop before anyone is answered.
      if (deferSync) withoutSync(run);
      else run();
    } catch (error) {
      for (const pending of batch) pending.reject(toError(error));
      return;
    }
    const answer = () =>
      batch.forEach((pending, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(toError(outcome.error));
      });
    if (!deferSync || !durable) {
      answer();
      return;
    }
    durable().then(answer, (error: unknown) => {
      for (const pending of batch) pending.reject(toError(error));
    });
  };

  const enqueue = (item: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      // After the poll phase: requests read in this turn write in the same commit.
      scheduled ??= setImmediate(() => commit(durable !== undefined));
    });
  return Object.assign(enqueue, { flush: () => commit(false) });
}
