import { factsOfKind } from '../backends/kinds.js';
import { type EscalationRule, QUEUE_METRICS, type RuleMetric, SYSTEM_METRICS } from '../config/schema.js';
import { isUnstable } from './network.js';
import type { QueueSample, Sample, SystemSample } from './samples.js';

/**
 * Rule evaluation: a pure function of the samples and a clock. No I/O, no Date.now(): the same
 * history and `now` always give the same results, which is what the tests pin down.
 */

/** How many of the latest samples the sparkline shows. */
export const SERIES_LENGTH = 12;

/** One rule applied to one subject (`system/queue`, or `system` for system metrics). */
export interface RuleResult {
  /** `rule|subject`: at most one open alert per key. */
  key: string;
  rule: EscalationRule;
  subject: string;
  system: string;
  queue?: string;
  /** The latest value; undefined when it cannot be known (system unreachable, no earlier sample). */
  value: number | undefined;
  comparator: 'above' | 'below';
  threshold: number;
  /** The latest sample is over (or under) the threshold. */
  breachNow: boolean;
  /** The rule fires: the latest sample breaches and, with `for`, has done so for that long. */
  firing: boolean;
  /** Latest samples in a row that are known and not breaching (what `clearAfterSamples` counts). */
  cleanRun: number;
  /** The last values, oldest first, for the sparkline; null where unknown. */
  series: (number | null)[];
  /** For queue subjects: minutes to drain at the current rate (Infinity: not draining). */
  minutesToDrain?: number;
}

// Sets made once: `metricAt` asks for every subject at every sample it reads (10,000s a tick),
// and the lists are re-exported bindings that a scan went through each time.
const QUEUE_METRIC_SET: ReadonlySet<string> = new Set(QUEUE_METRICS);
const SYSTEM_METRIC_SET: ReadonlySet<string> = new Set(SYSTEM_METRICS);
const isQueueMetric = (metric: RuleMetric): boolean => QUEUE_METRIC_SET.has(metric);
export const isSystemMetric = (metric: RuleMetric): boolean => SYSTEM_METRIC_SET.has(metric);

/** Compiled patterns: a tick matches every rule against every queue (1,000s of tests a tick). */
const compiled = new Map<string, RegExp>();

/** `pushizo/dispatch-*` → a RegExp over `system/queue`; `*` is the only wildcard. */
export function patternRegExp(pattern: string): RegExp {
  const known = compiled.get(pattern);
  if (known) return known;
  if (compiled.size > 1000) compiled.clear();
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const regexp = new RegExp(`^${body}$`);
  compiled.set(pattern, regexp);
  return regexp;
}

/** Compiled matchers: a tick tests every pattern rule against every queue's path. */
const matchers = new Map<string, (text: string) => boolean>();

/**
 * `patternRegExp(pattern).test`, without a regular expression for the shapes rules use: one `*`
 * at the start, the end or in between is a suffix, prefix or both check. `^.*\/scheduler$` tried
 * from every position of every path was most of the rules' matching over 1,000 queues.
 */
export function patternMatcher(pattern: string): (text: string) => boolean {
  const known = matchers.get(pattern);
  if (known) return known;
  if (matchers.size > 1000) matchers.clear();
  const parts = pattern.split('*');
  let match: (text: string) => boolean;
  if (parts.length === 1) match = (text) => text === pattern;
  else if (parts.length === 2) {
    const [head, tail] = parts as [string, string];
    match = (text) =>
      text.length >= head.length + tail.length && text.startsWith(head) && text.endsWith(tail);
  } else {
    const regexp = patternRegExp(pattern);
    match = (text) => regexp.test(text);
  }
  matchers.set(pattern, match);
  return match;
}

/** Whether a rule watches `system/queue` (queue metrics) or `system` (system metrics). */
export function ruleMatches(rule: EscalationRule, system: string, queue?: string): boolean {
  return watches(rule, system, queue === undefined ? undefined : `${system}/${queue}`);
}

/** `ruleMatches`, given `system/queue` (undefined for the system itself). */
function watches(rule: EscalationRule, system: string, path: string | undefined): boolean {
  if (!rule.queues) return true;
  for (const pattern of rule.queues) {
    if (pattern === '*') return true;
    if (path !== undefined) {
      if (patternMatcher(pattern)(path)) return true;
      continue;
    }
    // A system metric is watched on every system a pattern names: `pushizo/*` watches `pushizo`.
    const slash = pattern.indexOf('/');
    if (patternMatcher(slash === -1 ? pattern : pattern.slice(0, slash))(system)) return true;
  }
  return false;
}

/**
 * A system of an indexed sample; its queues by name are made on the first lookup by name. Queues
 * come in the same order sample after sample and are found by position: most samples never need
 * the map, and a map of 1,000 queues for each new sample was most of indexing it.
 */
interface IndexedSystem {
  system: SystemSample;
  byName?: Map<string, QueueSample>;
}

/** Per sample, its systems by name, so each lookup is O(1). */
interface Indexed {
  at: number;
  systems: Map<string, IndexedSystem>;
}

/** The queue of that name in the system (the last of the name, when a list repeats one). */
function queueNamed(entry: IndexedSystem, name: string): QueueSample | undefined {
  entry.byName ??= new Map(entry.system.queues.map((q) => [q.name, q]));
  return entry.byName.get(name);
}

/**
 * Each sample indexed once: a monitor passes the same stored samples tick after tick (a sample is
 * never changed once taken), and indexing the whole history again every tick was a good part of
 * one over 1,000 queues.
 */
const indexed = new WeakMap<Sample, Indexed>();

function index(history: readonly Sample[]): Indexed[] {
  return history.map((sample) => {
    let entry = indexed.get(sample);
    if (!entry) {
      entry = {
        at: sample.at,
        systems: new Map(sample.systems.map((system) => [system.name, { system }])),
      };
      indexed.set(sample, entry);
    }
    return entry;
  });
}

/** The earliest sample at or after `at(i) − window` (without a window: the one before), before i. */
function windowStart(samples: readonly Indexed[], i: number, within: number | undefined): number | undefined {
  if (i === 0) return undefined;
  if (within === undefined) return i - 1;
  const from = samples[i]!.at - within;
  // Samples are oldest first: the first of 0…i−1 at or after `from`, by bisection.
  let lo = 0;
  let hi = i;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (samples[mid]!.at >= from) hi = mid;
    else lo = mid + 1;
  }
  return lo < i ? lo : i - 1;
}

/**
 * A system, or a queue of one. A queue's sample at each index is looked up once and kept (`rows`):
 * every rule watching the queue reads it, most of them at several samples (windows, `for`), and
 * two map lookups each time were most of a tick's rule work.
 */
interface Subject {
  system: string;
  queue?: string;
  /** `system/queue`, or `system`. */
  path: string;
  /** Where the queue is in its system's list in the latest sample: where it is in most others. */
  position?: number;
  /** The queue's sample at each index; null: its system was read but not the queue; false: not read. */
  rows?: (QueueSample | null | false)[];
}

/** The queue's sample at `i`; null: its system was read without it; false: its system was not read. */
function rowAt(samples: readonly Indexed[], i: number, s: Subject): QueueSample | null | false {
  if (s.queue === undefined) return false;
  // Its exact size at once: filled from the newest back, an array grown index by index is
  // several times that, for each of 1,000 queues a tick.
  s.rows ??= new Array(samples.length);
  const rows = s.rows;
  let row = rows[i];
  if (row === undefined) {
    const entry = samples[i]?.systems.get(s.system);
    if (!entry?.system.ok) row = false;
    else {
      // Queues come in the same order sample after sample: by position first, by name if not.
      const there = entry.system.queues[s.position ?? -1];
      row = (there?.name === s.queue ? there : queueNamed(entry, s.queue)) ?? null;
    }
    rows[i] = row;
  }
  return row;
}

function queueAt(samples: readonly Indexed[], i: number, s: Subject): QueueSample | undefined {
  return rowAt(samples, i, s) || undefined;
}

function drainRate(samples: readonly Indexed[], i: number, s: Subject, within?: number): number | undefined {
  const q = queueAt(samples, i, s);
  const j = windowStart(samples, i, within);
  const before = j === undefined ? undefined : queueAt(samples, j, s);
  if (!q || !before || j === undefined) return undefined;
  const minutes = (samples[i]!.at - samples[j]!.at) / 60_000;
  if (minutes <= 0) return undefined;
  return (before.waiting - q.waiting) / minutes;
}

/** The value of `metric` for `subject` at sample `i`, or undefined when it cannot be known. */
export function metricAt(
  samples: readonly Indexed[],
  i: number,
  metric: RuleMetric,
  s: Subject,
  within?: number,
): number | undefined {
  // A queue metric needs only the queue's row (undefined too when its system was not read at i).
  if (isSystemMetric(metric)) return systemMetricAt(samples, i, metric, s, within);
  const q = queueAt(samples, i, s);
  if (!q) return undefined;
  switch (metric) {
    case 'waiting':
      return q.waiting;
    case 'active':
      return q.active;
    case 'delayed':
      return q.delayed;
    case 'failed':
      return q.failed;
    case 'workers':
      return q.workers ?? undefined;
    case 'oldestWaitingSeconds':
      return q.oldestWaitingSeconds ?? (q.waiting === 0 ? 0 : undefined);
    case 'failedIncrease': {
      const j = windowStart(samples, i, within);
      if (j === undefined) return undefined;
      // Counted by when jobs failed, sample by sample: a failed set capped by `removeOnFail`
      // stays the same size however many fail. Each good sample counts since the one before.
      // Jobs taken out of the set (retried, purged) are not growth: a set that shrank between two
      // samples lost that many of its failures (a capped set trims to its size, never below it).
      let counted = 0;
      let exact = true;
      let previous: QueueSample | null | false = rowAt(samples, j, s);
      for (let k = j + 1; k <= i && exact; k++) {
        const row = rowAt(samples, k, s);
        if (row === false) continue;
        const failedNew = row?.failedNew;
        if (failedNew === undefined) exact = false;
        else counted += failedNew - (row && previous ? Math.max(0, previous.failed - row.failed) : 0);
        previous = row;
      }
      if (exact) return Math.max(0, counted);
      const before = queueAt(samples, j, s);
      // A failed set trimmed or retried shrinks; that is not a negative number of failures.
      return before ? Math.max(0, q.failed - before.failed) : undefined;
    }
    case 'drainRate':
      return drainRate(samples, i, s, within);
    case 'throughput':
      return q.throughput;
    case 'failedPerMinute':
      return q.failedPerMinute;
    case 'waitP95Seconds':
      return q.waitP95Seconds;
    case 'runP95Seconds':
      return q.runP95Seconds;
    case 'minutesToDrain': {
      if (q.waiting === 0) return 0;
      const rate = drainRate(samples, i, s, within);
      if (rate === undefined) return undefined;
      return rate > 0 ? q.waiting / rate : Number.POSITIVE_INFINITY;
    }
    default:
      return undefined;
  }
}

/**
 * Samples of a system that failed `failed`: without a window, those in a row up to `i` (a run,
 * reset by the first good one); with `within`, every one in the window (k of n), so a link that
 * flaps, failing every other sample, is seen although it never fails three in a row.
 */
function failedSamples(
  samples: readonly Indexed[],
  i: number,
  s: Subject,
  within: number | undefined,
  failed: (system: SystemSample) => boolean,
): number {
  let count = 0;
  if (within === undefined) {
    for (let k = i; k >= 0; k--) {
      const at = samples[k]!.systems.get(s.system);
      if (!at || !failed(at.system)) break;
      count++;
    }
    return count;
  }
  const from = samples[i]!.at - within;
  for (let k = i; k >= 0 && samples[k]!.at > from; k--) {
    const at = samples[k]!.systems.get(s.system);
    if (at && failed(at.system)) count++;
  }
  return count;
}

function systemMetricAt(
  samples: readonly Indexed[],
  i: number,
  metric: RuleMetric,
  s: Subject,
  within?: number,
): number | undefined {
  const entry = samples[i]?.systems.get(s.system);
  if (!entry) return undefined;
  const { system } = entry;
  switch (metric) {
    case 'unreachableSamples':
      return failedSamples(samples, i, s, within, (sys) => !sys.ok);
    case 'networkUnstableSamples':
      return failedSamples(samples, i, s, within, isUnstable);
    case 'redisMemoryRatio':
      return system.ok && system.memory && system.memory.max > 0
        ? system.memory.used / system.memory.max
        : undefined;
    case 'evictionPolicy':
      // A system whose evicted keys are lost work (BullMQ) needs every key kept; others are not held to it.
      if (!system.ok || !system.memory) return undefined;
      return factsOfKind(system.type).evictionLosesJobs && system.memory.policy !== 'noeviction' ? 1 : 0;
    case 'persistenceFailing':
      // 1 while the last background save or AOF write failed; Redis says `ok` again after one succeeds.
      if (!system.ok || !system.persistence) return undefined;
      return system.persistence.rdb === 'err' || system.persistence.aof === 'err' ? 1 : 0;
    case 'workerChurn': {
      const j = windowStart(samples, i, within);
      if (j === undefined || !system.ok) return undefined;
      let churn = 0;
      let pairs = 0;
      for (let k = j + 1; k <= i; k++) {
        const a = samples[k - 1]!.systems.get(s.system)?.system;
        const b = samples[k]!.systems.get(s.system)?.system;
        if (!a?.ok || !b?.ok || !a.workers || !b.workers) continue;
        const before = new Set(a.workers);
        const after = new Set(b.workers);
        for (const w of after) if (!before.has(w)) churn++;
        for (const w of before) if (!after.has(w)) churn++;
        pairs++;
      }
      return pairs === 0 ? undefined : churn;
    }
    default:
      return undefined;
  }
}

function breaches(
  rule: EscalationRule,
  value: number | undefined,
  samples: readonly Indexed[],
  i: number,
  s: Subject,
): boolean {
  if (value === undefined) return false;
  // A queue paused on purpose is not an incident: nobody is meant to consume it. A rule that
  // should watch it anyway says `includePaused: true`. Read per sample, so a queue paused while an
  // alert fires counts as clean and the alert resolves, and a resumed one starts its `for` afresh.
  if (s.queue !== undefined && !rule.includePaused && queueAt(samples, i, s)?.paused) return false;
  const over = rule.above !== undefined ? value > rule.above : value < (rule.below as number);
  if (!over) return false;
  // Every `when` must hold at the same sample: "under 10/min while 50,000 wait". Unknown is not held.
  for (const c of rule.when ?? []) {
    const v = metricAt(samples, i, c.metric, s, rule.within);
    if (v === undefined || !(c.above !== undefined ? v > c.above : v < (c.below as number))) return false;
  }
  // "No workers" only matters while jobs wait: an idle queue nobody consumes is not an incident.
  if (rule.metric === 'workers') return (queueAt(samples, i, s)?.waiting ?? 0) > 0;
  return true;
}

/** Every subject of the latest sample, once for all rules (so a queue's `rows` serve each rule). */
function subjectsIn(latest: Indexed | undefined): { systems: Subject[]; queues: Subject[] } {
  const out = { systems: [] as Subject[], queues: [] as Subject[] };
  if (!latest) return out;
  for (const [name, entry] of latest.systems) {
    const { system } = entry;
    out.systems.push({ system: name, path: name });
    if (!system.ok) continue;
    // Each name once (the last of a name, as its index has it), at its place in the list.
    system.queues.forEach((q, position) => {
      if (queueNamed(entry, q.name) === q)
        out.queues.push({ system: name, queue: q.name, path: `${name}/${q.name}`, position });
    });
  }
  return out;
}

type Subjects = { systems: Subject[]; queues: Subject[] };

/**
 * The subjects a rule watches: the list itself, shared, when it watches them all; else those its
 * patterns match, and where they are in the list (so a later evaluation over the same subjects
 * takes them by position instead of matching every pattern against every queue again).
 */
function subjectsOf(rule: EscalationRule, all: Subjects): { watched: Subject[]; at?: Int32Array } {
  const list = isSystemMetric(rule.metric) ? all.systems : all.queues;
  if (!rule.queues || rule.queues.includes('*')) return { watched: list };
  const at: number[] = [];
  list.forEach((s, k) => {
    if (watches(rule, s.system, s.queue === undefined ? undefined : s.path)) at.push(k);
  });
  return { watched: at.map((k) => list[k]!), at: Int32Array.from(at) };
}

/** The systems and queues of two latest samples are the same, in the same places. */
function sameSubjects(a: Indexed, b: Indexed): boolean {
  if (a.systems.size !== b.systems.size) return false;
  const others = b.systems.entries();
  for (const [name, { system }] of a.systems) {
    const [otherName, other] = others.next().value as [string, IndexedSystem];
    if (otherName !== name || other.system.ok !== system.ok) return false;
    if (!system.ok) continue;
    const queues = system.queues;
    const otherQueues = other.system.queues;
    if (queues.length !== otherQueues.length) return false;
    for (let k = 0; k < queues.length; k++) if (queues[k]!.name !== otherQueues[k]!.name) return false;
  }
  return true;
}

/**
 * The previous evaluation's subjects, for a history that is the previous one plus a sample
 * (`shift` older ones pruned) whose latest sample has the same systems and queues in the same
 * places: each subject anew (the previous results keep theirs), with the rows it had looked up,
 * moved by `shift`. A tick then looks up each queue's row in the new sample only, not in every
 * sample of its windows again; and no pattern is matched again.
 */
function carriedSubjects(
  memory: RuleMemory,
  samples: readonly Indexed[],
  shift: number,
): { subjects: Subjects; watched: Map<EscalationRule, Subject[]> } | undefined {
  const previous = memory.subjects;
  const before = memory.samples?.[memory.samples.length - 1];
  const latest = samples[samples.length - 1];
  if (!previous || !before || !latest || !sameSubjects(before, latest)) return undefined;
  const length = samples.length;
  const queues = previous.queues.map((s): Subject => {
    const carried: Subject = { system: s.system, queue: s.queue, path: s.path, position: s.position };
    const old = s.rows;
    if (old) {
      // Samples shift..end of the old history are 0..length−2 of this one; the newest is looked up when asked.
      const rows = new Array<QueueSample | null | false>(length);
      for (let k = shift; k < old.length; k++) {
        const row = old[k];
        if (row !== undefined) rows[k - shift] = row;
      }
      carried.rows = rows;
    }
    return carried;
  });
  const subjects = { systems: previous.systems.map((s) => ({ ...s })), queues };
  const watched = new Map<EscalationRule, Subject[]>();
  for (const [rule, at] of memory.watched) {
    const list = isSystemMetric(rule.metric) ? subjects.systems : subjects.queues;
    watched.set(rule, at ? Array.from(at, (k) => list[k]!) : list);
  }
  return { subjects, watched };
}

/**
 * What an evaluation leaves for the next one over the same history grown by a sample (the
 * monitor's, tick after tick): for each breach under a rule with `for`, where its walk back
 * stopped (where the breach began, or `for` ago). Without it every tick walked each breach back
 * sample by sample: over 1,000 queues without workers (two default rules breach on every queue)
 * most of a tick's rule work. It changes no result: it is used only when this history is the
 * previous one, the very same samples (pruned at its start, perhaps), plus one newer sample.
 */
export interface RuleMemory {
  samples?: readonly Indexed[];
  /**
   * Per rule with `for`, its subjects in order and, for each, the index in `samples` where the
   * walk back stopped (−1: not breaching at its end). By position, not by key: a tick looked up
   * thousands of keys made afresh, and hashing them cost more than the walks they saved.
   */
  runs: Map<EscalationRule, { subjects: Subject[]; starts: Int32Array }>;
  /** The subjects of the latest sample, with the rows looked up for them (`carriedSubjects`). */
  subjects?: Subjects;
  /** Per rule, where its subjects are in `subjects` (null: all of them). */
  watched: Map<EscalationRule, Int32Array | null>;
}

export function newRuleMemory(): RuleMemory {
  return { runs: new Map(), watched: new Map() };
}

/** How many samples `previous` had before `samples[0]`, when `samples` is it plus one; else undefined. */
function continuation(
  previous: readonly Indexed[] | undefined,
  samples: readonly Indexed[],
): number | undefined {
  if (!previous || samples.length < 2) return undefined;
  const shift = previous.indexOf(samples[0]!);
  if (shift < 0 || previous.length - shift !== samples.length - 1) return undefined;
  for (let i = 1; i < samples.length - 1; i++) if (samples[i] !== previous[i + shift]) return undefined;
  return shift;
}

export interface EvaluateOptions {
  /** Kept by the caller from one evaluation to the next: saves work, changes no result. */
  memory?: RuleMemory;
  /**
   * Only the results that fire, and those whose key is here (the alerts open): a monitor needs
   * no others, and making thousands of them a tick was a good part of one.
   */
  only?: ReadonlySet<string>;
}

/** What `assess` found for one rule and subject (one object, reused: nothing is made per subject). */
const assessed = { value: undefined as number | undefined, breachNow: false, firing: false, runStart: -1 };

/**
 * The value, breach and firing of one rule and subject, into `assessed`. `remembered`: where the
 * previous evaluation's walk back stopped, when this breach was on then already.
 */
function assess(
  rule: EscalationRule,
  s: Subject,
  samples: readonly Indexed[],
  now: number,
  remembered: number | undefined,
): void {
  const last = samples.length - 1;
  const value = metricAt(samples, last, rule.metric, s, rule.within);
  const breachNow = breaches(rule, value, samples, last, s);
  let firing = breachNow;
  let start = -1;
  if (breachNow && rule.for !== undefined) {
    // Back to where the breach began, or only as far as `for` ago: older is no more firing.
    start = remembered ?? last;
    while (
      now - samples[start]!.at < rule.for &&
      start > 0 &&
      breaches(rule, metricAt(samples, start - 1, rule.metric, s, rule.within), samples, start - 1, s)
    )
      start--;
    firing = now - samples[start]!.at >= rule.for;
  }
  assessed.value = value;
  assessed.breachNow = breachNow;
  assessed.firing = firing;
  assessed.runStart = start;
}

/**
 * Every rule against every subject it watches in the latest sample. `history` is oldest first;
 * `now` is the clock `for` windows are measured against.
 */
export function evaluateRules(
  rules: readonly EscalationRule[],
  history: readonly Sample[],
  now: number,
  options: EvaluateOptions = {},
): RuleResult[] {
  const { memory, only } = options;
  const samples = index(history);
  const shift = continuation(memory?.samples, samples);
  const carried = memory && shift !== undefined ? carriedSubjects(memory, samples, shift) : undefined;
  const subjects = carried?.subjects ?? subjectsIn(samples[samples.length - 1]);
  const runs: RuleMemory['runs'] = new Map();
  const watchedAt: RuleMemory['watched'] = new Map();
  const results: RuleResult[] = [];
  for (const rule of rules) {
    let watched = carried?.watched.get(rule);
    if (!watched) {
      const found = subjectsOf(rule, subjects);
      watched = found.watched;
      watchedAt.set(rule, found.at ?? null);
    } else watchedAt.set(rule, memory!.watched.get(rule) ?? null);
    const before = shift === undefined || rule.for === undefined ? undefined : memory?.runs.get(rule);
    const starts = rule.for === undefined ? undefined : new Int32Array(watched.length);
    for (let k = 0; k < watched.length; k++) {
      const s = watched[k]!;
      const was = before?.subjects[k];
      const stopped = was && was.system === s.system && was.queue === s.queue ? before!.starts[k]! : -1;
      // What the previous walk went over is in this history too, `shift` samples earlier (or pruned).
      assess(rule, s, samples, now, stopped < 0 ? undefined : Math.max(0, stopped - shift!));
      if (starts) starts[k] = assessed.runStart;
      if (only && !assessed.firing && (only.size === 0 || !only.has(`${rule.name}|${s.path}`))) continue;
      results.push(new Evaluation(rule, s, samples, assessed));
    }
    if (starts) runs.set(rule, { subjects: watched, starts });
  }
  if (memory) {
    memory.samples = samples;
    memory.runs = runs;
    memory.subjects = subjects;
    memory.watched = watchedAt;
  }
  return results;
}

/**
 * One rule against one subject. The value, breach and firing are worked out at once (`assess`);
 * the clean run, the series and the time to drain only when read, once each: the lifecycle reads
 * them only for a subject with an alert (open, or opening), and with 1,000 queues almost none has
 * one, so computing them for every subject was most of a tick. Each sample's value is computed once.
 * The lazy fields (and the key) are getters: read them, or `toJSON()` for a plain object (a spread drops them).
 */
class Evaluation implements RuleResult {
  readonly subject: string;
  readonly system: string;
  readonly queue?: string;
  readonly value: number | undefined;
  readonly comparator: 'above' | 'below';
  readonly threshold: number;
  readonly breachNow: boolean;
  readonly firing: boolean;
  readonly #samples: readonly Indexed[];
  readonly #s: Subject;
  /**
   * Values at earlier samples, once one is read (null: computed, unknown). Only a breach (its
   * `for`) and an alert read them: most of a tick's thousands of evaluations never allocate it.
   */
  #values?: (number | null | undefined)[];
  #key?: string;
  #cleanRun?: number;
  #series?: (number | null)[];
  #drain?: { minutes: number | undefined };

  constructor(
    readonly rule: EscalationRule,
    s: Subject,
    samples: readonly Indexed[],
    found: typeof assessed,
  ) {
    this.#samples = samples;
    this.#s = s;
    this.subject = s.path;
    this.system = s.system;
    if (s.queue !== undefined) this.queue = s.queue;
    this.comparator = rule.above !== undefined ? 'above' : 'below';
    this.threshold = (rule.above ?? rule.below) as number;
    this.value = found.value;
    this.breachNow = found.breachNow;
    this.firing = found.firing;
  }

  /** Made when read: a tick reads it only where an alert is open or opening. */
  get key(): string {
    this.#key ??= `${this.rule.name}|${this.subject}`;
    return this.#key;
  }

  #valueAt(i: number): number | undefined {
    const last = this.#samples.length - 1;
    if (i === last) return this.value;
    this.#values ??= new Array(last);
    let value = this.#values[i];
    if (value === undefined) {
      value = metricAt(this.#samples, i, this.rule.metric, this.#s, this.rule.within) ?? null;
      this.#values[i] = value;
    }
    return value ?? undefined;
  }

  get cleanRun(): number {
    if (this.#cleanRun === undefined) {
      let run = 0;
      for (let i = this.#samples.length - 1; i >= 0; i--) {
        const v = this.#valueAt(i);
        if (v === undefined || breaches(this.rule, v, this.#samples, i, this.#s)) break;
        run++;
      }
      this.#cleanRun = run;
    }
    return this.#cleanRun;
  }

  get series(): (number | null)[] {
    if (!this.#series) {
      const last = this.#samples.length - 1;
      const series: (number | null)[] = [];
      for (let i = Math.max(0, last - SERIES_LENGTH + 1); i <= last; i++) {
        const v = this.#valueAt(i);
        series.push(v === undefined || !Number.isFinite(v) ? null : v);
      }
      this.#series = series;
    }
    return this.#series;
  }

  get minutesToDrain(): number | undefined {
    if (this.queue === undefined) return undefined;
    this.#drain ??= {
      minutes: metricAt(this.#samples, this.#samples.length - 1, 'minutesToDrain', this.#s),
    };
    return this.#drain.minutes;
  }

  /** As a plain object (JSON, logs, test equality): every field, the lazy ones worked out. */
  toJSON(): RuleResult {
    return {
      key: this.key,
      rule: this.rule,
      subject: this.subject,
      system: this.system,
      ...(this.queue === undefined ? {} : { queue: this.queue }),
      value: this.value,
      comparator: this.comparator,
      threshold: this.threshold,
      breachNow: this.breachNow,
      firing: this.firing,
      cleanRun: this.cleanRun,
      series: this.series,
      ...(this.minutesToDrain === undefined ? {} : { minutesToDrain: this.minutesToDrain }),
    };
  }
}

/** Queue metrics are watched per `system/queue`; the rest per system. */
export function metricScope(metric: RuleMetric): 'queue' | 'system' {
  return isQueueMetric(metric) ? 'queue' : 'system';
}
