import type { KnownBlock } from '@slack/types';
import type { SystemType, WorkerInfo } from '../backends/queue-backend.js';
import { type Locale, messages } from '../i18n/index.js';
import { ActionId } from './action-ids.js';
import { formatDuration, formatNumber, formatUtc } from './format.js';
import { actions, button, context, errorLine, header, inCode, inline, packSections, section } from './kit.js';
import { BUILDER_TEXT_BUDGET, SlackLimits } from './limits.js';
import type { Message } from './message.js';
import { type GroupView, groupLines } from './scale.js';

/**
 * One system's part of a workers answer. `error` is a one-line reason, not yet escaped. `groups`
 * are the system's configured worker groups, shown whether or not its Redis answered.
 */
export type WorkersSystem = (
  | { name: string; type: SystemType; ok: true; workers: WorkerInfo[] }
  | { name: string; type: SystemType; ok: false; error: string }
) & { groups?: GroupView[] };

/** What `/queue workers` shows. */
export interface WorkersView {
  generatedAt: Date;
  systems: WorkersSystem[];
  /** `system` or `''`: what the Refresh button asks for again. */
  scope?: string;
}

const QUEUES_SHOWN = 6;

interface Prepared {
  head: string;
  /** Worker lines, busiest first when not all fit. */
  lines: string[];
  byBusy: number[];
}

/** The `/queue workers` message: per system the workers, their queues and longest-running task. */
export function workersMessage(view: WorkersView, locale: Locale): Message {
  const t = messages(locale).workers;
  const top: KnownBlock[] = [
    header(t.title),
    context(t.updated(formatUtc(view.generatedAt, locale)), t.argsNote),
  ];
  const scope = view.scope ?? '';
  const tail = actions([
    button(t.refresh, ActionId.WorkersRefresh, scope.length <= SlackLimits.buttonValue ? scope : ''),
  ]);
  const prepared = view.systems.map((s) => prepare(s, view.generatedAt, locale));
  const budget = BUILDER_TEXT_BUDGET - JSON.stringify([...top, tail]).length - 300;

  // Keep whole system heads while they fit, then give every system the same number of worker lines.
  const kept: Prepared[] = [];
  let used = 0;
  for (const p of prepared) {
    if (used + p.head.length + 1 > budget) break;
    kept.push(p);
    used += p.head.length + 1;
  }
  const cost = (cap: number) =>
    kept.reduce((sum, p) => {
      const shown = Math.min(cap, p.lines.length);
      const lines = p.byBusy.slice(0, shown).reduce((s, i) => s + p.lines[i]!.length + 1, 0);
      return sum + p.head.length + 1 + lines + (shown < p.lines.length ? 80 : 0);
    }, 0);
  let lo = 0;
  let hi = Math.max(0, ...kept.map((p) => p.lines.length));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (cost(mid) <= budget) lo = mid;
    else hi = mid - 1;
  }

  const groups = kept.map((p) => {
    if (p.lines.length <= lo) return [p.head, ...p.lines];
    const shown = new Set(p.byBusy.slice(0, lo));
    const lines = p.lines.filter((_, i) => shown.has(i));
    return [p.head, ...lines, t.moreWorkers(p.lines.length - lo)];
  });
  const room = SlackLimits.messageBlocks - top.length - 2;
  let texts = groups.flatMap((g) => packSections(g));
  if (texts.length > room) texts = packSections(groups.flat());
  const blocks: KnownBlock[] = [...top, ...texts.slice(0, room).map(section)];
  if (kept.length < prepared.length) blocks.push(context(t.moreSystems(prepared.length - kept.length)));
  blocks.push(tail);

  const count = view.systems.reduce((sum, s) => sum + (s.ok ? s.workers.length : 0), 0);
  return { text: t.fallback(view.systems.length, count), blocks };
}

function prepare(sys: WorkersSystem, now: Date, locale: Locale): Prepared {
  const t = messages(locale).workers;
  const type = messages(locale).status.typeLabel[sys.type] ?? sys.type;
  const groups = groupLines(sys.groups ?? [], locale);
  if (!sys.ok)
    return {
      head: [t.systemError(inline(sys.name, 100), type, errorLine(sys.error, 500)), ...groups].join('\n'),
      lines: [],
      byBusy: [],
    };
  const known = sys.workers.filter((w) => w.active !== undefined || w.activeTasks !== undefined);
  const running = known.length > 0 ? known.reduce((sum, w) => sum + runningCount(w), 0) : null;
  const head = [t.systemLine(inline(sys.name, 100), type, sys.workers.length, running)];
  if (sys.workers.length === 0) head.push(t.none);
  head.push(...groups);
  const lines = sys.workers.map((w) => workerLine(w, now, locale));
  const byBusy = sys.workers
    .map((w, i) => ({ i, running: runningCount(w), oldest: oldestStart(w) ?? Number.POSITIVE_INFINITY }))
    .sort((a, b) => b.running - a.running || a.oldest - b.oldest || a.i - b.i)
    .map((x) => x.i);
  return { head: head.join('\n'), lines, byBusy };
}

function runningCount(w: WorkerInfo): number {
  return w.active ?? w.activeTasks?.length ?? 0;
}

function oldestStart(w: WorkerInfo): number | undefined {
  const starts = (w.activeTasks ?? [])
    .map((task) => task.startedAt)
    .filter((s): s is number => s !== undefined);
  return starts.length > 0 ? Math.min(...starts) : undefined;
}

/**
 * Celery's `max-concurrency` is what the pool started with; after a `scale` its process count
 * differs ("concurrency 2 · 3 pool processes" read as a contradiction). One part instead: the
 * processes, and the starting concurrency only when it differs.
 */
function poolDetails(details: Record<string, unknown>): Record<string, unknown> {
  const { concurrency, processes } = details;
  if (typeof concurrency !== 'number' || typeof processes !== 'number') return details;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    if (key === 'concurrency') continue;
    if (key === 'processes')
      out[processes === concurrency ? 'concurrency' : 'resized'] =
        processes === concurrency ? concurrency : [processes, concurrency];
    else out[key] = value;
  }
  return out;
}

function workerLine(w: WorkerInfo, now: Date, locale: Locale): string {
  const t = messages(locale).workers;
  const parts = [`• \`${inCode(w.name, 120)}\``];
  if (w.queues) {
    const names = w.queues.slice(0, QUEUES_SHOWN).map((q) => inline(q, 60));
    if (w.queues.length > QUEUES_SHOWN) names.push(t.moreQueues(w.queues.length - QUEUES_SHOWN));
    parts.push(t.queues(names.join(', ')));
  } else {
    parts.push(t.queues(t.allQueues));
  }
  if (w.active !== undefined || w.activeTasks !== undefined) parts.push(t.running(runningCount(w)));
  const tasks = w.activeTasks ?? [];
  if (tasks.length > 0) {
    const dated = tasks.filter((task) => task.startedAt !== undefined);
    const longest =
      dated.length > 0 ? dated.reduce((a, b) => (a.startedAt! <= b.startedAt! ? a : b)) : tasks[0]!;
    const duration =
      longest.startedAt !== undefined
        ? formatDuration((now.getTime() - longest.startedAt) / 1000, locale)
        : null;
    parts.push(t.longest(`\`${inCode(longest.name, 80)}\``, duration));
  }
  if (w.reserved !== undefined && w.reserved > 0) {
    const next = w.reservedTasks?.[0];
    parts.push(t.reserved(w.reserved, next ? `\`${inCode(next.name, 80)}\`` : null));
  }
  if (w.idleSeconds !== undefined && w.idleSeconds > 0)
    parts.push(t.idle(formatDuration(w.idleSeconds, locale)));
  for (const [key, value] of Object.entries(poolDetails(w.details ?? {})).slice(0, 4)) {
    // Durations read better as "up 3h 2m" than as a count of seconds.
    if (key === 'uptimeSeconds' && typeof value === 'number')
      parts.push(t.uptime(formatDuration(value, locale)));
    else if (key === 'ageSeconds' && typeof value === 'number')
      parts.push(t.details.connectedFor(formatDuration(value, locale)));
    else if (key === 'resized' && Array.isArray(value))
      parts.push(t.details.resized(formatNumber(value[0], locale), formatNumber(value[1], locale)));
    else if (Object.hasOwn(t.details, key) && key !== 'connectedFor' && key !== 'resized')
      parts.push(t.details[key as 'addr' | 'concurrency' | 'processes' | 'pid'](inline(String(value), 60)));
    else parts.push(`${inline(key, 30)} ${inline(String(value), 60)}`);
  }
  return parts.join(' · ');
}
