import type { Redis } from 'ioredis';

/** What a SCAN walk may spend: keys Redis looks at, and time of ours. */
export interface ScanBudget {
  maxKeys: number;
  maxMillis: number;
  /** SCAN's COUNT: keys Redis looks at per call. */
  count: number;
  /** SCAN's MATCH, applied by Redis after it looked at the keys. */
  match?: string;
  now?: () => number;
}

/** How a walk went: keys looked at (all keys, matching or not), and why it stopped. */
export interface ScanWalk {
  scanned: number;
  stoppedBy: 'done' | 'keys' | 'time';
}

/**
 * SCAN until the cursor comes back to 0 or a budget runs out, handing each non-empty batch to
 * `onBatch` before the next call: every Redis call is one SCAN step or what `onBatch` sends, so
 * the walk never holds Redis for long, and what it covered is said, not guessed.
 */
export async function scanWithin(
  client: Redis,
  budget: ScanBudget,
  /** `scanned`: keys looked at so far, this batch included (a walk's progress). */
  onBatch: (keys: string[], scanned: number) => Promise<void>,
): Promise<ScanWalk> {
  const now = budget.now ?? Date.now;
  const started = now();
  let cursor = '0';
  let scanned = 0;
  do {
    if (scanned >= budget.maxKeys) return { scanned, stoppedBy: 'keys' };
    if (now() - started >= budget.maxMillis) return { scanned, stoppedBy: 'time' };
    const count = Math.min(budget.count, budget.maxKeys - scanned);
    const [next, keys] = budget.match
      ? await client.scan(cursor, 'MATCH', budget.match, 'COUNT', count)
      : await client.scan(cursor, 'COUNT', count);
    cursor = next;
    // Without MATCH, a batch is the keys looked at (cut to the budget); with it, COUNT is.
    const batch = budget.match ? keys : keys.slice(0, budget.maxKeys - scanned);
    scanned += budget.match ? count : batch.length;
    if (batch.length > 0) await onBatch(batch, scanned);
  } while (cursor !== '0');
  return { scanned, stoppedBy: 'done' };
}
