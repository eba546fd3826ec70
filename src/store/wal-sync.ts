import { close, fsync, open } from 'node:fs';

/** An fsync of an open file, as `node:fs`' callback form. */
export type SyncFile = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

/** Makes what was committed to a SQLite WAL so far durable, off the event loop. */
export interface WalSync {
  /**
   * Resolves once everything written to the WAL before this call is on disk. Calls made while an
   * fsync runs share the next one, so a burst costs two fsyncs at most, whatever its size.
   */
  sync(): Promise<void>;
  /** Waits for the fsyncs under way, then closes the file handle. */
  close(): Promise<void>;
}

/**
 * The fsync of `<database>-wal` on libuv's thread pool. A commit made with `synchronous=NORMAL`
 * has written its frames to the WAL but not synced them; fsync on any handle of that file makes
 * them durable, which is all `synchronous=FULL` adds in WAL mode, without the event loop standing
 * still for it. The WAL is never deleted while the database is open (only the last connection's
 * close removes it, and a checkpoint syncs what it copies out of it), so one handle serves.
 */
export function walSync(
  databasePath: string,
  /** The fsync to call (tests: a disk that fails once). */
  syncFile: SyncFile = fsync,
): WalSync {
  const path = `${databasePath}-wal`;
  let fd: Promise<number> | undefined;
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  // A failed fsync is final. Linux reports a writeback error once per open file and may mark the
  // pages clean, so a later fsync that succeeds would not mean the earlier frames are on disk;
  // and WAL recovery stops at the first frame that did not make it, taking later ones with it.
  // Every later sync fails too, until the store is opened again (a restart recovers from disk).
  let broken: unknown;

  const handle = () => {
    if (fd) return fd;
    const opening = new Promise<number>((resolve, reject) =>
      open(path, 'r+', (error, opened) => (error ? reject(error) : resolve(opened))),
    );
    // A failed open is tried again next time.
    opening.catch(() => {
      if (fd === opening) fd = undefined;
    });
    fd = opening;
    return opening;
  };

  const fsyncOnce = async () => {
    if (broken) throw broken;
    // A failed open is only that (tried again next time); a failed fsync is final.
    const opened = await handle();
    await new Promise<void>((resolve, reject) =>
      syncFile(opened, (error) => {
        if (!error) return resolve();
        broken ??= error;
        reject(error);
      }),
    );
  };

  const sync = (): Promise<void> => {
    if (broken) return Promise.reject(broken);
    if (!running) {
      running = fsyncOnce().finally(() => {
        running = undefined;
      });
      return running;
    }
    // The running fsync may have started before the caller's commit: the next one covers it.
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return sync();
      });
    return queued;
  };

  return {
    sync,
    async close() {
      while (running || queued) await (queued ?? running)?.catch(() => undefined);
      const closing = fd;
      fd = undefined;
      const opened = await closing?.catch(() => undefined);
      if (opened !== undefined) await new Promise<void>((resolve) => close(opened, () => resolve()));
    },
  };
}
