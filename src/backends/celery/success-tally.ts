/** Per queue, per second: SUCCESS results counted. */
export type SuccessCounts = Map<string | null, Map<number, number>>;

export function addSuccess(counts: SuccessCounts, queue: string | null, second: number, n = 1) {
  let seconds = counts.get(queue);
  if (!seconds) {
    seconds = new Map();
    counts.set(queue, seconds);
  }
  seconds.set(second, (seconds.get(second) ?? 0) + n);
}

/**
 * The failure index's count of successes (src/backends/celery/failures.ts): per queue and second,
 * from its scans and from the results Celery publishes, each success counted once. A scan counts
 * those done before the moment it started (`lastCut`, epoch ms); the subscription those at or
 * after it. Counts are per second: while a scan runs, the subscription's successes of the second
 * it started in but after it (`atCut`) are also kept apart, to be added to the scan's count of
 * that second.
 */
export function createSuccessTally(recentMs: number) {
  let successes: SuccessCounts = new Map();
  let lastCut: number | undefined;
  let scanCut: number | undefined;
  let atCut: SuccessCounts = new Map();
  /** From when the success counts are whole: the first scan's start, less `recentMs`. */
  let coveredFrom: number | undefined;
  /** Result keys the last scan found, and published results found in our DB since. */
  let resultsSeen = 0;

  return {
    /** A published success whose key was found in our DB: done at `at` (epoch ms). */
    published(queue: string | null, at: number) {
      resultsSeen++;
      // Done before the last scan's start: that scan counted it already.
      if (lastCut !== undefined && at < lastCut) return;
      const second = Math.floor(at / 1000);
      addSuccess(successes, queue, second);
      if (scanCut !== undefined && at >= scanCut && second === Math.floor(scanCut / 1000))
        addSuccess(atCut, queue, second);
    },
    /** A scan starts at `cut`: it counts the successes done before, the subscription the rest. */
    scanStarted(cut: number) {
      scanCut = cut;
      atCut = new Map();
    },
    /** The scan begun at `cut` counted `recent` and saw `seen` results: its counts replace ours. */
    scanFinished(cut: number, recent: SuccessCounts, seen: number) {
      const cutSecond = Math.floor(cut / 1000);
      for (const [queue, seconds] of successes)
        for (const [second, n] of seconds) if (second > cutSecond) addSuccess(recent, queue, second, n);
      for (const [queue, seconds] of atCut)
        for (const [second, n] of seconds) addSuccess(recent, queue, second, n);
      successes = recent;
      lastCut = cut;
      coveredFrom ??= cut - recentMs;
      resultsSeen = seen;
    },
    /** The scan is over, finished or failed. */
    scanEnded() {
      scanCut = undefined;
      atCut = new Map();
    },
    /** Forgets the seconds before `oldest`. */
    dropBefore(oldest: number) {
      for (const [queue, seconds] of successes) {
        for (const second of seconds.keys()) if (second < oldest) seconds.delete(second);
        if (seconds.size === 0) successes.delete(queue);
      }
    },
    /** Whether the counts are whole from `sinceMs` on (a scan covered it). */
    covers(sinceMs: number, now: () => number): boolean {
      return !(coveredFrom === undefined || sinceMs < coveredFrom || sinceMs < now() - recentMs);
    },
    /**
     * Successes per queue in whole seconds after `sinceMs`: the part of its own second is left out
     * (at most a second of a 5-minute span), rather than counting what finished before it.
     */
    completedSince(sinceMs: number, add: (queue: string | null, n: number) => void) {
      for (const [queue, seconds] of successes)
        for (const [second, n] of seconds) if (second * 1000 >= sinceMs) add(queue, n);
    },
    /** Any result at all was seen (a scan's keys, or one published since). */
    anySeen: () => resultsSeen > 0,
  };
}
