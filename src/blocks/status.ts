import type { KnownBlock } from '@slack/types';
import type {
  DurationPercentiles,
  QueueCounts,
  QueueThroughput,
  SystemStatus,
  SystemType,
  SystemWarning,
} from '../backends/queue-backend.js';
import { type Locale, messages } from '../i18n/index.js';
import { ActionId, indexedActionId } from './action-ids.js';
import { formatBytes, formatDecimal, formatDurationCompact, formatNumber, formatUtc } from './format.js';
import {
  actions,
  button,
  codeBlocks,
  context,
  errorLine,
  fitEscaped,
  header,
  inCode,
  inline,
  packSections,
  section,
  truncate,
} from './kit.js';
import { BUILDER_TEXT_BUDGET, SlackLimits } from './limits.js';
import type { Message } from './message.js';
import { type FlagThresholds, flagSeverity, type QueueFlag, queueFlags } from './queue-flags.js';

export { DEFAULT_FLAG_THRESHOLDS, type FlagThresholds, QueueFlag, queueFlags } from './queue-flags.js';

/** One system's part of a status answer: its status, or why it could not be read. */
export type StatusSystem =
  | { name: string; type: SystemType; ok: true; status: SystemStatus }
  /** `error` is an already-rendered one-line reason, not yet escaped. */
  | { name: string; type: SystemType; ok: false; error: string };

/** What `/queue status` shows. */
export interface StatusView {
  /** `''`, `system` or `system/queue`: what the Refresh button asks for again. */
  scope: string;
  generatedAt: Date;
  systems: StatusSystem[];
  /** Overrides of the backlog thresholds (defaults: 1000 jobs, 300 s). */
  thresholds?: Partial<FlagThresholds>;
}

/** Names wider than this are cut in the table; the DLQ buttons keep the full name. */
const NAME_WIDTH = 30;
const MAX_DLQ_BUTTONS = 10;
const ERROR_CHARS = 500;

interface Row {
  q: QueueCounts;
  flags: QueueFlag[];
  severity: number;
}

interface Prepared {
  sys: StatusSystem;
  /** Lines above the table (system line, memory, warnings, workers), or the error line. */
  head: string;
  rows: Row[];
  /** Worst first. */
  worst: Row[];
  flagged: number;
  /** Table characters of the `c` worst rows at index `c` (widths over all rows: an upper bound). */
  worstCost: number[];
  headingCost: number;
}

interface Plan {
  p: Prepared;
  shown: Row[];
  hidden: Row[];
}

/** The `/queue status` message: a compact table per system, worst queues first when space runs out. */
export function statusMessage(view: StatusView, locale: Locale): Message {
  const t = messages(locale).status;
  const prepared = view.systems.map((sys) => prepare(sys, view.thresholds, locale));

  const title = view.scope ? t.titleScoped(fitEscaped(view.scope, 120)) : t.title;
  const top: KnownBlock[] = [header(title), context(t.updated(formatUtc(view.generatedAt, locale)))];
  const refresh = button(
    t.refresh,
    ActionId.StatusRefresh,
    view.scope.length <= SlackLimits.buttonValue ? view.scope : '',
  );
  // DLQ buttons are chosen after the rows; reserve their worst case now.
  const buttonReserve = MAX_DLQ_BUTTONS * SlackLimits.buttonText + refresh.text.text.length;
  const fixed = textOf(top) + buttonReserve + 300;
  const plans = plan(prepared, Math.max(0, BUILDER_TEXT_BUDGET - fixed));

  const pieceGroups = plans.kept.map((pl) => systemPieces(pl, locale));
  const room = SlackLimits.messageBlocks - top.length - 2;
  let texts = pieceGroups.flatMap((pieces) => packSections(pieces));
  if (texts.length > room) texts = packSections(pieceGroups.flat());
  const blocks: KnownBlock[] = [...top, ...texts.slice(0, room).map(section)];

  if (plans.dropped.length > 0) {
    const failing = plans.dropped.filter((p) => !p.sys.ok).length;
    const flagged = plans.dropped.filter((p) => p.flagged > 0).length;
    blocks.push(context(t.moreSystems(plans.dropped.length, failing, flagged)));
  }

  const dlq = plans.kept
    .flatMap((pl) => pl.shown.filter((r) => r.q.failed > 0).map((r) => ({ system: pl.p.sys.name, row: r })))
    .filter(({ system, row }) => system.length + 1 + row.q.name.length <= SlackLimits.buttonValue)
    .sort((a, b) => b.row.q.failed - a.row.q.failed)
    .slice(0, MAX_DLQ_BUTTONS);
  blocks.push(
    actions([
      ...dlq.map(({ system, row }, i) =>
        button(
          fitEscaped(t.openDlq(`${system}/${row.q.name}`), SlackLimits.buttonText),
          indexedActionId(ActionId.OpenDlq, i),
          `${system}/${row.q.name}`,
        ),
      ),
      refresh,
    ]),
  );

  const flaggedQueues = prepared.reduce((sum, p) => sum + p.flagged, 0);
  const failing = prepared.filter((p) => !p.sys.ok).length;
  const text = t.fallback(fitEscaped(view.scope, 200), view.systems.length, flaggedQueues, failing);
  return { text, blocks };
}

function prepare(
  sys: StatusSystem,
  thresholds: Partial<FlagThresholds> | undefined,
  locale: Locale,
): Prepared {
  const t = messages(locale).status;
  const typeLabel = t.typeLabel[sys.type] ?? sys.type;
  if (!sys.ok) {
    const head = t.systemError(inline(sys.name, 100), typeLabel, errorLine(sys.error, ERROR_CHARS));
    return { sys, head, rows: [], worst: [], flagged: 0, worstCost: [0], headingCost: 0 };
  }
  const st = sys.status;
  const inspectFailed = st.warnings.some((w) => w.code === 'WorkerInspectFailed');
  const rows: Row[] = st.queues.map((q) => {
    // A failed inspection says nothing about who consumes what: do not cry "no workers".
    const flags = queueFlags(q, st.workers, thresholds).filter((f) => !(inspectFailed && f === 'noWorkers'));
    return { q, flags, severity: flagSeverity(flags) };
  });
  const worst = [...rows].sort(
    (a, b) =>
      b.severity - a.severity ||
      b.q.waiting + b.q.prioritized - (a.q.waiting + a.q.prioritized) ||
      b.q.failed - a.q.failed ||
      (a.q.name < b.q.name ? -1 : a.q.name > b.q.name ? 1 : 0),
  );
  const flagged = rows.filter((r) => r.flags.length > 0).length;

  const lines = [t.systemLine(inline(sys.name, 100), typeLabel, rows.length, flagged)];
  lines.push(memoryLine(st, locale));
  for (const w of st.warnings) lines.push(warningLine(w, locale));
  lines.push(workersLine(st, locale));
  lines.push(...throughputLines(st, locale));
  if (rows.length === 0) lines.push(t.noQueues);

  const table = renderTable(rows, locale);
  const lineOf = new Map(rows.map((r, i) => [r, table.lines[i] ?? '']));
  const worstCost = [0];
  for (const r of worst) worstCost.push(worstCost[worstCost.length - 1]! + lineOf.get(r)!.length + 1);
  return {
    sys,
    head: lines.join('\n'),
    rows,
    worst,
    flagged,
    worstCost,
    headingCost: table.heading.length + 10,
  };
}

function memoryLine(st: SystemStatus, locale: Locale): string {
  const t = messages(locale).status;
  const { usedMemoryBytes: used, maxMemoryBytes: max, maxMemoryPolicy: policy } = st.redis;
  const percent = max > 0 ? Math.round((used / max) * 100) : null;
  return t.memory(
    formatBytes(used, locale),
    max > 0 ? formatBytes(max, locale) : null,
    percent,
    inCode(policy || '?', 60),
    inCode(st.name, 80),
  );
}

function warningLine(w: SystemWarning, locale: Locale): string {
  const t = messages(locale).status;
  const params: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(w.params ?? {})) {
    params[k] = typeof v === 'string' ? inCode(v, 200) : v;
  }
  const render = t.warnings[w.code];
  return render ? render(params) : t.unknownWarning(inCode(String(w.code), 60));
}

function workersLine(st: SystemStatus, locale: Locale): string {
  const t = messages(locale).status;
  const known = st.workers.filter((w) => w.active !== undefined || w.activeTasks !== undefined);
  const running =
    known.length > 0 ? known.reduce((sum, w) => sum + (w.active ?? w.activeTasks?.length ?? 0), 0) : null;
  let line = t.workers(st.workers.length, running);
  if (st.unacked !== undefined) line += ` · ${t.unacked(formatNumber(st.unacked, locale))}`;
  return line;
}

interface Column {
  title: string;
  cell: (r: Row) => string;
  right: boolean;
}

/** Monospace rows; the empty optional columns are left out so the table stays narrow on a phone. */
function renderTable(rows: Row[], locale: Locale): { heading: string; lines: string[] } {
  const c = messages(locale).status.columns;
  const f = messages(locale).status.flags;
  const n = (v: number) => formatNumber(v, locale);
  const cols: Column[] = [
    { title: c.queue, cell: (r) => truncateName(r.q.name), right: false },
    // Waiting is every job ready to run, prioritized ones included, as everywhere else (help);
    // the prioritized column says how many of them are prioritized.
    { title: c.waiting, cell: (r) => n(r.q.waiting + r.q.prioritized), right: true },
    { title: c.active, cell: (r) => n(r.q.active), right: true },
  ];
  if (rows.some((r) => r.q.delayed > 0))
    cols.push({ title: c.delayed, cell: (r) => n(r.q.delayed), right: true });
  if (rows.some((r) => r.q.prioritized > 0)) {
    cols.push({ title: c.prioritized, cell: (r) => n(r.q.prioritized), right: true });
  }
  cols.push({ title: c.failed, cell: (r) => n(r.q.failed), right: true });
  if (rows.some((r) => r.q.oldestWaitingSeconds !== null)) {
    cols.push({
      title: c.oldest,
      cell: (r) =>
        r.q.oldestWaitingSeconds === null ? '-' : formatDurationCompact(r.q.oldestWaitingSeconds, locale),
      right: true,
    });
  }
  cols.push(...throughputColumns(rows, locale));
  const withFlags = rows.some((r) => r.flags.length > 0);
  const cells = rows.map((r) => cols.map((col) => col.cell(r)));
  const widths = cols.map((col, i) => Math.max(col.title.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (values: string[], flags: string) => {
    const padded = values.map((v, i) => (cols[i]?.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)));
    return inCode((withFlags ? [...padded, flags] : padded).join('  ').trimEnd(), 1000);
  };
  return {
    heading: line(
      cols.map((col) => col.title),
      c.flags,
    ),
    lines: rows.map((r, i) => line(cells[i]!, r.flags.map((fl) => f[fl]).join(', '))),
  };
}

function truncateName(name: string): string {
  return truncate(name, NAME_WIDTH);
}

function tableCost(p: Prepared, rows: number): number {
  if (rows === 0) return 0;
  // The same rows cost the same in any order: the worst-first prefix sums serve every cap.
  const body = p.worstCost[Math.min(rows, p.worst.length)] ?? 0;
  // Every ~2,900 characters the table starts a new code block with its heading again.
  const blocks = Math.ceil((body + p.headingCost) / (SlackLimits.sectionText - 200));
  return body + blocks * (p.headingCost + 10);
}

const SUMMARY_COST = 260;

/**
 * Picks how many rows each system shows. Every system gets the same cap (water-filling), found by
 * bisection, so one huge system cannot push the others out; when even the heads do not fit,
 * systems are dropped, the healthy ones first.
 */
function plan(prepared: Prepared[], budget: number): { kept: Plan[]; dropped: Prepared[] } {
  const rowsFor = (p: Prepared, cap: number) =>
    cap >= p.rows.length ? p.rows : p.worst.slice(0, Math.max(0, cap));
  const cost = (p: Prepared, cap: number) => {
    const shown = Math.min(Math.max(0, cap), p.rows.length);
    return p.head.length + 1 + tableCost(p, shown) + (shown < p.rows.length ? SUMMARY_COST : 0);
  };
  const total = (ps: Prepared[], cap: number) => ps.reduce((sum, p) => sum + cost(p, cap), 0);

  let kept = prepared;
  const dropped: Prepared[] = [];
  if (total(kept, 0) > budget) {
    // Keep the systems that need eyes: not answering, then most flagged queues.
    const byNeed = [...prepared].sort((a, b) => Number(a.sys.ok) - Number(b.sys.ok) || b.flagged - a.flagged);
    const keep = new Set<Prepared>();
    let used = SUMMARY_COST;
    for (const p of byNeed) {
      const c = cost(p, 0);
      if (used + c > budget) {
        dropped.push(p);
        continue;
      }
      keep.add(p);
      used += c;
    }
    kept = prepared.filter((p) => keep.has(p));
  }

  const maxRows = Math.max(0, ...kept.map((p) => p.rows.length));
  let lo = 0;
  let hi = maxRows;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (total(kept, mid) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return {
    kept: kept.map((p) => {
      const shown = rowsFor(p, lo);
      const set = new Set(shown);
      return { p, shown, hidden: p.rows.filter((r) => !set.has(r)) };
    }),
    dropped,
  };
}

function systemPieces(pl: Plan, locale: Locale): string[] {
  const t = messages(locale).status;
  const pieces = [pl.p.head];
  if (!pl.p.sys.ok) return pieces;
  if (pl.shown.length > 0) {
    // Render again over the shown rows only: columns can only get narrower.
    const table = renderTable(pl.shown, locale);
    pieces.push(...codeBlocks(table.heading, table.lines));
  }
  if (pl.hidden.length > 0) {
    const counts = { failures: 0, backlog: 0, paused: 0, noWorkers: 0 };
    for (const r of pl.hidden) for (const f of r.flags) counts[f]++;
    pieces.push(t.moreQueues(pl.hidden.length, counts, inCode(t.queueHint(pl.p.sys.name), 150)));
  }
  return pieces;
}

function textOf(blocks: KnownBlock[]): number {
  return JSON.stringify(blocks).length;
}

/** A rate in a narrow column: one decimal under 10 a minute (`0.4`), whole numbers above. */
function formatRate(perMinute: number, locale: Locale): string {
  return perMinute < 10 ? formatDecimal(perMinute, 1, locale) : formatNumber(Math.round(perMinute), locale);
}

/** A job duration: tenths of a second under a minute (`0.4s`), the compact units above. */
function formatMillis(ms: number, locale: Locale): string {
  if (ms < 1000) return messages(locale).throughput.millis(formatNumber(Math.round(ms), locale));
  if (ms < 60_000) return messages(locale).throughput.seconds(formatDecimal(ms / 1000, 1, locale));
  return formatDurationCompact(ms / 1000, locale);
}

const p95Cell = (d: DurationPercentiles | undefined, locale: Locale) =>
  d && 'p95Ms' in d ? formatMillis(d.p95Ms, locale) : '-';

/** The throughput columns, each only when some row knows it (Celery knows no durations). */
function throughputColumns(rows: Row[], locale: Locale): Column[] {
  const c = messages(locale).throughput.columns;
  const cols: Column[] = [];
  const known = (pick: (tp: QueueThroughput) => boolean) =>
    rows.some((r) => r.q.throughput && pick(r.q.throughput));
  if (!known(() => true)) return cols;
  cols.push({
    title: c.perMinute,
    cell: (r) => (r.q.throughput ? formatRate(r.q.throughput.completedPerMinute, locale) : '-'),
    right: true,
  });
  if (known((tp) => 'p95Ms' in tp.wait))
    cols.push({ title: c.waitP95, cell: (r) => p95Cell(r.q.throughput?.wait, locale), right: true });
  if (known((tp) => 'p95Ms' in tp.run))
    cols.push({ title: c.runP95, cell: (r) => p95Cell(r.q.throughput?.run, locale), right: true });
  return cols;
}

function percentilesText(d: DurationPercentiles, locale: Locale): string {
  const t = messages(locale).throughput;
  return 'p50Ms' in d
    ? t.percentiles(formatMillis(d.p50Ms, locale), formatMillis(d.p95Ms, locale))
    : (t.unknown[d.unknown] ?? d.unknown);
}

/**
 * The throughput in words, for a status of one queue (its rates, where they come from, both
 * percentiles, delayed jobs by due time); for a Celery table, why it has no duration columns.
 */
function throughputLines(st: SystemStatus, locale: Locale): string[] {
  const t = messages(locale).throughput;
  const lines: string[] = [];
  const only = st.queues.length === 1 ? st.queues[0] : undefined;
  const tp = only?.throughput;
  if (tp) {
    const estimated = tp.estimated ? t.estimated : '';
    lines.push(
      t.line(
        formatDurationCompact(tp.spanMs / 1000, locale),
        formatRate(tp.completedPerMinute, locale),
        formatRate(tp.failedPerMinute, locale),
        (t.source[tp.source] ?? tp.source) + estimated,
      ),
    );
    const wait = percentilesText(tp.wait, locale);
    const run = percentilesText(tp.run, locale);
    // A status of all queues times none; saying so on its only queue's line would be noise.
    const timed = !('unknown' in tp.wait && tp.wait.unknown === 'notSampled');
    if (timed)
      lines.push(
        tp.sampled > 0
          ? t.durations(wait, run, formatNumber(tp.sampled, locale))
          : t.unknownDurations(wait, run),
      );
  } else if (
    st.queues.some(
      (q) => q.throughput && 'unknown' in q.throughput.wait && q.throughput.wait.unknown === 'noEnqueueTime',
    )
  ) {
    lines.push(t.celeryNote);
  }
  const due = only?.delayedDue;
  if (due && only.delayed > 0) {
    const n = (v: number) => formatNumber(v, locale);
    lines.push(t.delayedDue(n(due.next5m), n(due.nextHour), n(due.nextDay), n(due.later)));
  }
  return lines;
}
