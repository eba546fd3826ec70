/**
 * One full garbage collection once the bot has gone quiet after a burst of commands.
 *
 * Why: during a burst V8 grows its heap with the garbage (measured: ~27 → ~44 MB for 1,000 status
 * commands while the live part stays ~27–30 MB). V8's memory reducer is meant to give that back
 * when the process is idle, but it does not do so reliably: in the startup bench it often left the
 * heap at its burst size for 20 s and more, so the bot's RSS stepped up with every busy minute and
 * stayed there. A bot that sits idle for hours between incidents should hold what it needs, not
 * what its busiest minute needed. One collection some seconds after the last command costs a few
 * tens of milliseconds while nothing is being asked, and V8 then unmaps the freed pages.
 *
 * It needs `gc`, which Node exposes with `--expose-gc` (`npm start` and the Dockerfile pass it).
 * Without it the collector does nothing and V8's own heuristics decide, as before.
 */

import { setFlagsFromString } from 'node:v8';

export interface IdleCollector {
  /** A command began: nothing is collected while one runs. */
  began(): void;
  /** A command ended: collect once nothing has run for `idleMs`. */
  ended(): void;
  stop(): void;
}

export interface IdleCollectorOptions {
  /** Quiet time after the last command before collecting. */
  idleMs?: number;
  /** The collection; `globalThis.gc` (present with `--expose-gc`) unless given. */
  collect?: (() => void) | undefined;
  now?: () => number;
}

export const IDLE_COLLECT_MS = 5_000;

export function createIdleCollector(options: IdleCollectorOptions = {}): IdleCollector {
  const idleMs = options.idleMs ?? IDLE_COLLECT_MS;
  const collect = 'collect' in options ? options.collect : exposedGc();
  const now = options.now ?? Date.now;
  let running = 0;
  let lastEnded = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const arm = (delayMs: number) => {
    timer = setTimeout(fire, delayMs);
    // Never what keeps the process alive.
    timer.unref();
  };
  function fire() {
    timer = undefined;
    if (stopped || !collect) return;
    // Busy again (a long command still running) or a command ended since: wait for quiet.
    if (running > 0) return;
    const quietFor = now() - lastEnded;
    if (quietFor < idleMs) {
      arm(idleMs - quietFor);
      return;
    }
    collect();
  }

  return {
    began() {
      running++;
    },
    ended() {
      running = Math.max(0, running - 1);
      lastEnded = now();
      if (!timer && !stopped && collect) arm(idleMs);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return undefined;
  return () => {
    // A plain full GC frees the garbage but leaves the old space's half-empty pages in place (the
    // heap stayed ~33 MB over ~27 MB live); compacting moves the survivors together so whole
    // pages can go back. Only for this one collection: compacting every GC would slow a purge.
    setFlagsFromString('--compact-on-every-full-gc');
    try {
      gc();
    } finally {
      setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}
