/** Edit distance (insert, delete, substitute, and swap of two neighbours count 1 each). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (!a.length) return b.length;
  if (!b.length) return a.length;
  // Three rows are enough for the restricted Damerau variant (adjacent transpositions).
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, prevPrev[j - 2]! + 1);
      }
      row.push(best);
    }
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The candidate the user most likely meant, or undefined when nothing is close enough to be a
 * plausible typo. Case differences are free; a unique prefix of at least three characters wins.
 */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  if (!needle || candidates.length === 0) return undefined;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(needle, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Short words tolerate one slip, longer ones about a third of their length.
  const allowed = Math.max(1, Math.floor(Math.max(needle.length, 3) / 3));
  if (best !== undefined && bestDistance <= allowed) return best;
  if (needle.length >= 3) {
    const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(needle));
    if (prefixed.length === 1) return prefixed[0];
  }
  return undefined;
}

/** Candidates ordered from most to least similar to the input (stable for equal distances). */
export function rankBySimilarity(input: string, candidates: readonly string[]): string[] {
  const needle = input.toLowerCase();
  return candidates
    .map((c, index) => ({ c, index, d: editDistance(needle, c.toLowerCase()) }))
    .sort((x, y) => x.d - y.d || x.index - y.index)
    .map((x) => x.c);
}
