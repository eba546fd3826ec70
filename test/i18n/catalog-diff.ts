/**
 * Compares two catalogs the way a translator's mistakes show up: a key only one of them has, a
 * value of another kind (text where the other has a function), a list of another length, and a
 * message function that takes other parameters or reads other ones.
 */

type Kind = 'string' | 'function' | 'array' | 'object' | 'other';
const kindOf = (v: unknown): Kind =>
  typeof v === 'string'
    ? 'string'
    : typeof v === 'function'
      ? 'function'
      : Array.isArray(v)
        ? 'array'
        : typeof v === 'object' && v !== null
          ? 'object'
          : 'other';

/** Every problem found, one line each: `status.columns.oldest: only in en`. */
export function diffCatalogs(
  a: unknown,
  b: unknown,
  names: [string, string] = ['en', 'tr'],
  path = '',
): string[] {
  const ka = kindOf(a);
  const kb = kindOf(b);
  const at = path || '(root)';
  if (ka !== kb) return [`${at}: ${ka} in ${names[0]}, ${kb} in ${names[1]}`];
  if (ka === 'array') {
    const xa = a as unknown[];
    const xb = b as unknown[];
    if (xa.length !== xb.length)
      return [`${at}: ${xa.length} items in ${names[0]}, ${xb.length} in ${names[1]}`];
    return xa.flatMap((item, i) => diffCatalogs(item, xb[i], names, `${path}[${i}]`));
  }
  if (ka === 'object') {
    const oa = a as Record<string, unknown>;
    const ob = b as Record<string, unknown>;
    const out: string[] = [];
    for (const key of Object.keys(oa)) if (!(key in ob)) out.push(`${join(path, key)}: only in ${names[0]}`);
    for (const key of Object.keys(ob)) if (!(key in oa)) out.push(`${join(path, key)}: only in ${names[1]}`);
    for (const key of Object.keys(oa)) {
      if (key in ob) out.push(...diffCatalogs(oa[key], ob[key], names, join(path, key)));
    }
    return out;
  }
  if (ka === 'function') {
    const fa = a as (...args: unknown[]) => unknown;
    const fb = b as (...args: unknown[]) => unknown;
    if (fa.length !== fb.length) {
      return [`${at}: takes ${fa.length} parameters in ${names[0]}, ${fb.length} in ${names[1]}`];
    }
    const ua = usedParameters(fa);
    const ub = usedParameters(fb);
    const missing = [...ua].filter((p) => !ub.has(p));
    const extra = [...ub].filter((p) => !ua.has(p));
    if (missing.length > 0 || extra.length > 0) {
      return [
        `${at}: ${names[1]} ${[missing.length ? `ignores ${missing.join(', ')}` : '', extra.length ? `reads ${extra.join(', ')} which ${names[0]} does not` : ''].filter(Boolean).join('; ')}`,
      ];
    }
  }
  return [];
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/**
 * Which parameters (and which properties of them: `p.queue`, `counts.failures`) a message
 * function uses. Each argument is a Proxy standing for "any value": read properties are recorded,
 * in a template it turns into a marker naming itself (found again in the output), as a number it
 * is 7, and `join`/`map`/`toLocaleString`/`toFixed` give back its marker. Branches on `=== 1` take
 * the plural side in both catalogs alike, so the sets compare like with like.
 */
export function usedParameters(fn: (...args: unknown[]) => unknown): Set<string> {
  const used = new Set<string>();
  const args = Array.from({ length: Math.max(fn.length, 1) }, (_, i) => probe(`#${i}`, used));
  let out: unknown;
  try {
    out = fn(...args);
  } catch {
    // What was read before the throw still counts; both catalogs throw at the same place or not.
  }
  for (const m of String(typeof out === 'string' ? out : '').matchAll(/⟦([^⟧]+)⟧/g)) used.add(m[1]!);
  return new Set([...used].map((u) => u.replace(/\[\]$/, '')));
}

function probe(name: string, used: Set<string>): unknown {
  const marker = `⟦${name}⟧`;
  const target = () => marker;
  return new Proxy(target, {
    get(_t, key) {
      if (key === Symbol.toPrimitive) {
        // Compared or looked up (`n > 0`, `words[comparator]`): that is a use too.
        return (hint: string) => {
          used.add(name);
          return hint === 'number' ? 7 : marker;
        };
      }
      if (typeof key === 'symbol') return undefined;
      if (key === 'length') return 2;
      if (['join', 'toLocaleString', 'toFixed', 'toString', 'trim', 'slice'].includes(key))
        return () => marker;
      if (key === 'split') return () => [marker];
      if (key === 'map' || key === 'filter') {
        return (cb: (v: unknown, i: number) => unknown) => [cb(probe(`${name}[]`, used), 0)];
      }
      const child = `${name}.${key}`;
      used.add(child);
      return probe(child, used);
    },
    apply() {
      return marker;
    },
  });
}
