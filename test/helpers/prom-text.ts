/**
 * A parser for Prometheus' text exposition format (version 0.0.4), strict enough that a
 * malformed line fails the test: `# HELP`/`# TYPE` lines, samples with escaped label values,
 * and special values (NaN, +Inf, -Inf).
 */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type?: string;
  help?: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/**
 * As Prometheus reads a value (Go's strconv.ParseFloat): NaN and Inf in any case. prom-client
 * writes NaN as `Nan` (a default metric such as the event-loop lag has one before its first sample).
 */
function parseValue(text: string): number {
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad sample value: ${text}`);
  return Number(text);
}

function parseLabels(text: string, at: { i: number }): Record<string, string> {
  const labels: Record<string, string> = {};
  at.i++; // {
  while (text[at.i] !== '}') {
    const name = NAME.exec(text.slice(at.i))?.[0];
    if (!name) throw new Error(`bad label name in: ${text}`);
    at.i += name.length;
    if (text[at.i] !== '=' || text[at.i + 1] !== '"') throw new Error(`expected ="… in: ${text}`);
    at.i += 2;
    let value = '';
    while (text[at.i] !== '"') {
      if (at.i >= text.length) throw new Error(`unterminated label value in: ${text}`);
      if (text[at.i] === '\\') {
        const next = text[at.i + 1];
        value += next === 'n' ? '\n' : next;
        at.i += 2;
      } else {
        value += text[at.i];
        at.i++;
      }
    }
    at.i++; // closing quote
    labels[name] = value;
    if (text[at.i] === ',') at.i++;
  }
  at.i++; // }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) {
      f = { name, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'HELP') family(meta[2]!).help = meta[3];
      else family(meta[2]!).type = meta[3];
      continue;
    }
    if (line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`bad sample line: ${line}`);
    const at = { i: name.length };
    const labels = line[at.i] === '{' ? parseLabels(line, at) : {};
    const rest = line.slice(at.i).trim().split(/\s+/);
    const value = parseValue(rest[0]!);
    // Histogram and summary series belong to their base family.
    const base = name.replace(/_(bucket|sum|count)$/, '');
    const owner = families.has(base) && families.get(base)?.type !== undefined ? base : name;
    family(owner).samples.push({ name, labels, value });
  }
  return families;
}
