import type { KnownBlock } from '@slack/types';
import { factsOfKind } from '../backends/kinds.js';
import type {
  DurationPercentiles,
  QueueCounts,
  QueueThroughput,
  RetryLoops,
  SystemStatus,
  SystemType,
  SystemWarning,
} from '../backends/queue-backend.js';
import { contextOfQueue, type QueueContext, type QueueEntry } from '../config/queue-context.js';
import { type Locale, messages } from '../i18n/index.js';
import type { LimitRecord } from '../store/store.js';
import { ActionId, indexedActionId } from './action-ids.js';
import {
  formatBytes,
  formatDecimal,
  formatDurationCompact,
  formatNumber,
  formatRate,
  formatUtc,
} from './format.js';
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
import { queueContextLine } from './queue-context.js';
import { type FlagThresholds, flagSeverity, type QueueFlag, queueFlags } from './queue-flags.js';
import { queueLimitItems, taskLimitItems } from './queue-limits.js';

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
  /** The config's systems, for who owns each flagged queue (`queues[].owner`, runbook…). */
  queueContext?: readonly { name: string; queueContext?: readonly QueueEntry[] }[];
  /** The limits queue-ops set that are in force (their `--for` end; Celery task rates). */
  limits?: readonly LimitRecord[];
}

/** Names wider than this are cut in the table; the DLQ buttons keep the full name. */
const NAME_WIDTH = 30;
const MAX_DLQ_BUTTONS = 10;
const ERROR_CHARS = 500;
/** Flagged queues per system whose owner and runbook are shown under the table, worst first. */
const MAX_CONTEXT_LINES = 5;
/** Queues named on one context line; the rest are counted. */
const QUEUES_PER_CONTEXT = 4;
/** One context line at most (a runbook and a dashboard link of 500 characters would not fit). */
const CONTEXT_LINE_CHARS = 700;
/** All of a system's context lines: the table and the other systems come first. */
const CONTEXT_CHARS = 1800;

/** Flagged queues that share one context line; `first` is the worst one's index in `worst`. */
interface StatusContext {
  rows: Row[];
  line: string;
  first: number;
  cost: number;
}

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
  /** The worst flagged queues with configured context, and their lines (shown when the row is). */
  contexts: StatusContext[];
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
  const prepared = view.systems.map((sys) =>
    prepare(sys, view.thresholds, locale, view.queueContext, view.limits ?? []),
  );

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
  queueContext: StatusView['queueContext'],
  limits: readonly LimitRecord[],
): Prepared {
  const t = messages(locale).status;
  const typeLabel = t.typeLabel[sys.type] ?? sys.type;
  if (!sys.ok) {
    const head = t.systemError(inline(sys.name, 100), typeLabel, errorLine(sys.error, ERROR_CHARS));
    return {
      sys,
      head,
      rows: [],
      worst: [],
      contexts: [],
      flagged: 0,
      worstCost: [0],
      headingCost: 0,
    };
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
  if (st.retrying && st.retrying.retrying > 0) lines.push(retryLoopLine(st.retrying, locale));
  const limitsLine = limitLine(
    st,
    limits.filter((l) => l.system === sys.name),
    locale,
  );
  if (limitsLine) lines.push(limitsLine);
  if (rows.length === 0) lines.push(t.noQueues);
  lines.push(...oldestNotes(rows, st.type, locale));

  const contexts = flaggedContexts(worst, sys.name, queueContext, locale);
  const table = renderTable(rows, locale);
  const lineOf = new Map(rows.map((r, i) => [r, table.lines[i] ?? '']));
  const worstCost = [0];
  for (const r of worst) worstCost.push(worstCost[worstCost.length - 1]! + lineOf.get(r)!.length + 1);
  return {
    sys,
    head: lines.join('\n'),
    rows,
    worst,
    contexts,
    flagged,
    worstCost,
    headingCost: table.heading.length + 10,
  };
}

/**
 * The context of the worst flagged queues that the config gives an owner, runbook or notes to:
 * one line per distinct context (a `dispatch-*` entry covers several queues), worst first, each
 * shortened (notes, then the dashboard, then the runbook left out) to stay a line, and no more
 * of them than {@link CONTEXT_CHARS} hold: the table comes first.
 */
function flaggedContexts(
  worst: readonly Row[],
  system: string,
  queueContext: StatusView['queueContext'],
  locale: Locale,
): StatusContext[] {
  if (!queueContext) return [];
  const byLine = new Map<string, StatusContext>();
  let used = 60;
  worst.forEach((row, index) => {
    if (row.flags.length === 0) return;
    const line = fittingContextLine(contextOfQueue(queueContext, system, row.q.name), locale);
    if (!line) return;
    const known = byLine.get(line);
    if (known) {
      known.rows.push(row);
      return;
    }
    const cost = line.length + QUEUES_PER_CONTEXT * (NAME_WIDTH + 6) + 20;
    if (byLine.size >= MAX_CONTEXT_LINES || used + cost > CONTEXT_CHARS) return;
    used += cost;
    byLine.set(line, { line, rows: [row], first: index, cost });
  });
  return [...byLine.values()];
}

/** The context's line, with less of it until it fits {@link CONTEXT_LINE_CHARS}. */
function fittingContextLine(context: QueueContext | undefined, locale: Locale): string | undefined {
  if (!context) return undefined;
  const { notes: _notes, ...withoutNotes } = context;
  const { dashboard: _dashboard, ...linkAndOwner } = withoutNotes;
  const variants = [context, withoutNotes, linkAndOwner, context.owner ? { owner: context.owner } : {}];
  for (const variant of variants) {
    const line = queueContextLine(variant, locale);
    if (line && line.length <= CONTEXT_LINE_CHARS) return line;
  }
  return undefined;
}

/** What the context lines of the worst `shown` rows add to a system's part of the message. */
function contextCost(contexts: readonly StatusContext[], shown: number): number {
  const lines = contexts.filter((c) => c.first < shown);
  // The heading's cost in any locale, and the line breaks.
  return lines.length === 0 ? 0 : 60 + lines.reduce((sum, c) => sum + c.cost, 0);
}

/**
 * The limits in force: a BullMQ queue's from its meta (set by queue-ops or by the app), with the
 * `--for` end queue-ops knows of; a Celery task's rate as queue-ops set it. At most 10 are named.
 */
function limitLine(st: SystemStatus, records: readonly LimitRecord[], locale: Locale): string | undefined {
  const items =
    factsOfKind(st.type).limitTarget === 'task'
      ? taskLimitItems(records, locale)
      : st.queues.flatMap((q) => queueLimitItems(q.name, q.limits, records, locale));
  if (items.length === 0) return undefined;
  const shown = items.slice(0, 10);
  if (items.length > shown.length) shown.push(`+${items.length - shown.length}`);
  return messages(locale).limits.statusLine(shown);
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

/** Celery tasks whose messages say they were retried already: how many, by task name. */
export function retryLoopLine(loops: RetryLoops, locale: Locale): string {
  const t = messages(locale).status;
  const tasks = loops.tasks
    .map((task) =>
      t.retryTask(
        inCode(task.name, 100),
        formatNumber(task.count, locale),
        formatNumber(task.maxRetries, locale),
      ),
    )
    .join(', ');
  return t.retryLoop(
    formatNumber(loops.retrying, locale),
    tasks,
    loops.complete ? null : formatNumber(loops.sampled, locale),
  );
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
  if (rows.some((r) => r.q.oldestWaitingSeconds !== null || r.q.waiting + r.q.prioritized > 0)) {
    cols.push({ title: c.oldest, cell: (r) => oldestCell(r.q, locale), right: true });
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

/**
 * A queue's oldest wait as its cell: `≥ 1h 33m` when it is a lower bound (counted from the
 * monitor's first sighting), "unknown" when messages wait and nobody knows since when, `-` when
 * nothing waits.
 */
function oldestCell(q: QueueCounts, locale: Locale): string {
  const t = messages(locale).status;
  if (q.oldestWaitingSeconds === null) return q.waiting + q.prioritized > 0 ? t.oldestUnknown : '-';
  const age = formatDurationCompact(q.oldestWaitingSeconds, locale);
  return q.oldestWaitingFrom === 'firstSeen' ? t.atLeast(age) : age;
}

/** Queues named on the line saying since when a lower-bound age counts. */
const SEEN_SINCE_NAMED = 3;

/** What the oldest column's `≥` and "unknown" mean, under the system's other lines. */
function oldestNotes(rows: readonly Row[], type: SystemType, locale: Locale): string[] {
  const t = messages(locale).status;
  const notes: string[] = [];
  const seen = rows
    .filter((r) => r.q.oldestWaitingFrom === 'firstSeen' && r.q.waitingSeenSince !== undefined)
    .sort((a, b) => a.q.waitingSeenSince! - b.q.waitingSeenSince!);
  if (seen.length > 0) {
    const items = seen
      .slice(0, SEEN_SINCE_NAMED)
      .map((r) =>
        t.oldestSeenItem(`\`${inCode(r.q.name, 100)}\``, formatUtc(r.q.waitingSeenSince!, locale, false)),
      );
    notes.push(t.oldestSeenSince(items, seen.length - items.length));
  }
  const unknown = rows.filter((r) => r.q.oldestWaitingSeconds === null && r.q.waiting + r.q.prioritized > 0);
  // Ages from the monitor's sightings (Celery) are unknown until it sees; elsewhere for other reasons.
  if (unknown.length > 0 && factsOfKind(type).waitingAgeFromSightings)
    notes.push(t.oldestNeverSeen(unknown.length));
  return notes;
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
    return (
      p.head.length +
      1 +
      contextCost(p.contexts, shown) +
      tableCost(p, shown) +
      (shown < p.rows.length ? SUMMARY_COST : 0)
    );
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
  const shown = new Set(pl.shown);
  const contexts = pl.p.contexts
    .map((c) => ({ line: c.line, rows: c.rows.filter((r) => shown.has(r)) }))
    .filter((c) => c.rows.length > 0);
  if (contexts.length > 0) {
    const q = messages(locale).queueContext;
    const names = (rows: Row[]) =>
      rows
        .slice(0, QUEUES_PER_CONTEXT)
        .map((r) => `\`${inCode(truncateName(r.q.name), 80)}\``)
        .join(', ') + (rows.length > QUEUES_PER_CONTEXT ? ` +${rows.length - QUEUES_PER_CONTEXT}` : '');
    pieces.push([q.statusHeading, ...contexts.map((c) => q.statusLine(names(c.rows), c.line))].join('\n'));
  }
  return pieces;
}

function textOf(blocks: KnownBlock[]): number {
  return JSON.stringify(blocks).length;
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
    for (const outcome of ['completed', 'failed'] as const) {
      const why = tp.unknown?.[outcome];
      if (why) lines.push(t.rateUnknown[why](outcome));
    }
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
  const n = (v: number) => formatNumber(v, locale);
  if (due && only.delayed > 0)
    lines.push(t.delayedDue(n(due.next5m), n(due.nextHour), n(due.nextDay), n(due.later)));
  // Celery has no delayed set: say where they were counted, how far it looked, and what it misses.
  const scan = only?.delayedScan;
  if (scan) {
    const read = scan.complete
      ? t.celeryRead.all(n(scan.looked))
      : t.celeryRead.part(n(scan.looked), n(scan.of));
    lines.push(only.delayed === 0 ? t.celeryNoDelayed(read) : t.celeryDelayed(read));
  }
  return lines;
}
