import { setTimeout as sleep } from 'node:timers/promises';
import { vi } from 'vitest';

/**
 * Time bounds without a wall clock (machines here are noisy): setTimeout and setInterval stop,
 * and fire only when a test advances them (`vi.advanceTimersByTimeAsync`); Date, real I/O,
 * promises and setImmediate go on. A call that settles while they are stopped waited for no
 * timer at all (a connect timeout, a retry backoff, a slow answer's delay); one that needs the
 * clock moved shows how much timer time it waited for, whatever the machine's speed.
 * `vi.useRealTimers()` restores them.
 */
export function freezeTimers(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
}

/** Runs `call` with timers stopped (see {@link freezeTimers}); it settles only if it waits for none. */
export async function withTimersFrozen<T>(call: () => Promise<T>): Promise<T> {
  freezeTimers();
  try {
    return await call();
  } finally {
    vi.useRealTimers();
  }
}

/**
 * Like {@link withTimersFrozen}, except that timers due now still run: a zero delay (a store's
 * batch flushed on the next turn) is no wait. The clock never moves, so `call` settles only if
 * it waits for no timer with a delay.
 */
export async function withClockStopped<T>(call: () => Promise<T>): Promise<T> {
  freezeTimers();
  try {
    let outcome: { value: T } | { error: unknown } | undefined;
    void call().then(
      (value) => {
        outcome = { value };
      },
      (error: unknown) => {
        outcome = { error };
      },
    );
    while (outcome === undefined) {
      await vi.advanceTimersByTimeAsync(0);
      // Real I/O goes on meanwhile (node:timers/promises is not stopped).
      await sleep(1);
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  } finally {
    vi.useRealTimers();
  }
}
