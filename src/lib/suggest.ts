/**
 * Edit distance (insert, delete, substitute, and swap of two neighbours count 1 each).
 *
 * With `max`, the work is bounded: only cells within `max` of the diagonal are computed and the
 * answer is `max + 1` as soon as it is known to exceed `max`. Any viewer can type a long word,
 * and an unbounded table costs input length × name length for every name compared.
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  const limit = Math.max(0, Math.floor(max));
  const over = Number.isFinite(max) ? limit + 1 : Number.POSITIVE_INFINITY;
  if (Math.abs(a.length - b.length) > limit) return over;
  if (!a.length) return b.length;
  if (!b.length) return a.length;
  const band = Number.isFinite(max) ? limit : Math.max(a.length, b.length);
  const inf = Number.POSITIVE_INFINITY;
  // Three rows are enough for the restricted Damerau variant (adjacent transpositions).
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => (j <= band ? j : inf));
  for (let i = 1; i <= a.length; i++) {
    const row: number[] = new Array(b.length + 1).fill(inf);
    row[0] = i <= band ? i : inf;
    const from = Math.max(1, i - band);
    const to = Math.min(b.length, i + band);
    let rowMin = row[0]!;
    for (let j = from; j <= to; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, prevPrev[j - 2]! + 1);
      }
      row[j] = best;
      if (best < rowMin) rowMin = best;
    }
    // Every later row is at least this row's minimum: nothing under the limit can come any more.
    if (rowMin > limit) return over;
    prevPrev = prev;
    prev = row;
  }
  const distance = prev[b.length]!;
  return distance > limit ? over : distance;
}

/** Ranking beyond this distance tells nothing useful ("very different"), so it is not computed. */
const RANK_LIMIT = 32;

/**
 * What a name is also called without its namespace: Celery's `celery:alarm_processing` is the
 * `alarm_processing` queue to the people who run it (the runbooks name it so).
 */
function shortName(candidate: string): string | undefined {
  const colon = candidate.lastIndexOf(':');
  return colon > 0 && colon < candidate.length - 1 ? candidate.slice(colon + 1) : undefined;
}

/**
 * The candidate the user most likely meant, or undefined when nothing is close enough to be a
 * plausible typo. Case differences are free; a candidate's name without its `prefix:` counts as
 * its name too (`alarm_processing` → `celery:alarm_processing`); a unique prefix of at least two
 * characters wins (`al` → `alerts`).
 */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  if (!needle || candidates.length === 0) return undefined;
  // Short words tolerate one slip, longer ones about a third of their length.
  const allowed = Math.max(1, Math.floor(Math.max(needle.length, 3) / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const names = [candidate.toLowerCase()];
    const short = shortName(names[0]!);
    if (short !== undefined) names.push(short);
    for (const name of names) {
      // Only a distance that could still win matters, so that is the bound.
      const bound = Math.min(allowed, bestDistance - 1);
      const distance = editDistance(needle, name, bound);
      if (distance <= bound && distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    if (bestDistance === 0) break;
  }
  if (best !== undefined && bestDistance <= allowed) return best;
  if (needle.length >= 2) {
    const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(needle));
    if (prefixed.length === 1) return prefixed[0];
  }
  return undefined;
}

/** Every option a command line or a command takes, for "did you mean" on a mistyped one. */
export const KNOWN_FLAGS = [
  '--json',
  '--help',
  '--config',
  '--user',
  '--since',
  '--until',
  '--out',
  '--terminate',
  '--signal',
] as const;

/**
 * The option a mistyped one (`--jsn`) most likely was, among `flags`; its `=value` is left out.
 * An option that is right but in the wrong place gets no suggestion of itself.
 */
export function suggestFlag(word: string, flags: readonly string[] = KNOWN_FLAGS): string | undefined {
  if (!word.startsWith('-')) return undefined;
  const flag = word.split('=', 1)[0]!;
  const likely = suggest(flag, flags);
  return likely === flag ? undefined : likely;
}

/** Candidates ordered from most to least similar to the input (stable for equal distances). */
export function rankBySimilarity(input: string, candidates: readonly string[]): string[] {
  const needle = input.toLowerCase();
  return candidates
    .map((c, index) => ({ c, index, d: editDistance(needle, c.toLowerCase(), RANK_LIMIT) }))
    .sort((x, y) => x.d - y.d || x.index - y.index)
    .map((x) => x.c);
}
