/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions), so that the
 * typical typo `dispacth` is one edit away from `dispatch`.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  // Three rolling rows are enough for the transposition case.
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, beforePrevious[j - 2]! + 1);
      }
      current[j] = best;
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate the user most likely meant, or undefined when nothing is close enough to be a
 * helpful "did you mean". Case is ignored; a unique candidate that starts with the input wins
 * (people type `dispatch` for `dispatch-ios`); otherwise the closest by edit distance, within
 * roughly a third of the input's length, ties broken by the order of `candidates`.
 */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.trim().toLowerCase();
  if (!needle || candidates.length === 0) return undefined;
  const exact = candidates.find((c) => c.toLowerCase() === needle);
  if (exact !== undefined) return exact;
  const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(needle));
  if (prefixed.length === 1) return prefixed[0];
  const limit = Math.max(1, Math.floor(needle.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(needle, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}
