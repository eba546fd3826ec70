import { factsOfKind } from '../backends/kinds.js';
import type { SystemType, ThroughputSource, UnknownRate } from '../backends/queue-backend.js';
import type { EscalationRule } from '../config/schema.js';
import type { Alert } from '../store/alert.js';
import { ruleMatches } from './rules.js';
import type { Sample } from './samples.js';

/**
 * `trend`: a queue's depth by state over time, from the monitor's stored samples, with the alert
 * thresholds and the alerts' start and end. Everything here is pure (samples and alerts in,
 * numbers and an ECharts option out); `render-chart.ts` turns the option into a PNG.
 */

/** The windows `trend` offers; the monitor keeps samples for the longest. */
export const TREND_WINDOWS = { '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000 } as const;
export type TrendWindow = keyof typeof TREND_WINDOWS;
export const LONGEST_TREND_MS = TREND_WINDOWS['24h'];

/**
 * The series drawn, in legend order: the depths by state, and beside them the rates (jobs
 * completed and failed per minute over the 5 minutes before each sample, which every sample
 * carries), drawn against an axis of their own. Named as the rule metrics are, so a rule's
 * threshold on one is drawn on it.
 */
export const TREND_STATES = [
  'waiting',
  'active',
  'delayed',
  'failed',
  'throughput',
  'failedPerMinute',
] as const;
export type TrendState = (typeof TREND_STATES)[number];

/** The rates among the series: they have the right-hand axis. */
const RATE_STATES: readonly TrendState[] = ['throughput', 'failedPerMinute'];
export const isRate = (state: TrendState) => RATE_STATES.includes(state);

/**
 * What the rates of a trend are computed from, as its newest sample of the queue says: the
 * system's kind, where they came from, and why one is not known.
 */
export interface TrendRates {
  type: SystemType;
  source: ThroughputSource;
  /** Part of a Celery result backend was read, and the counts scaled up. */
  estimated: boolean;
  unknown: { completed?: UnknownRate; failed?: UnknownRate };
}

/** One sample of one queue; null where the system could not be read or the queue was missing. */
export interface TrendPoint {
  at: number;
  values: Record<TrendState, number | null>;
}

export interface TrendThreshold {
  rule: string;
  state: TrendState;
  comparator: 'above' | 'below';
  value: number;
}

export interface TrendAlertSpan {
  id: string;
  rule: string;
  severity: Alert['severity'];
  start: number;
  /** Undefined while it still fires. */
  end?: number;
}

export interface TrendData {
  system: string;
  queue: string;
  window: TrendWindow;
  from: number;
  to: number;
  points: TrendPoint[];
  thresholds: TrendThreshold[];
  alerts: TrendAlertSpan[];
  /** Undefined when no sample of the window read the queue. */
  rates?: TrendRates;
}

/** Where the samples and alert history come from (the store, through `trendSource`). */
export interface TrendSource {
  /**
   * Samples at or after `sinceMs`, oldest first, narrowed to one queue: each holds only that
   * system, and of its queues only that one (a day of all queues does not fit a bot's heap).
   */
  samples(sinceMs: number, only: { system: string; queue: string }): Promise<Sample[]>;
  /** Firing alerts, and the newest resolved alert of each key in `keys`. */
  alerts(keys: readonly string[]): Promise<Alert[]>;
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;

export function isTrendWindow(text: string): text is TrendWindow {
  return Object.hasOwn(TREND_WINDOWS, text);
}

/** The queue's depths, one point per sample in [from, to]. */
export function trendPoints(
  samples: readonly Sample[],
  system: string,
  queue: string,
  from: number,
  to: number,
): TrendPoint[] {
  const points: TrendPoint[] = [];
  for (const sample of samples) {
    if (sample.at < from || sample.at > to) continue;
    const s = sample.systems.find((x) => x.name === system);
    const q = s?.ok ? s.queues.find((x) => x.name === queue) : undefined;
    points.push({
      at: sample.at,
      values: {
        waiting: q ? q.waiting : null,
        active: q ? q.active : null,
        delayed: q ? q.delayed : null,
        failed: q ? q.failed : null,
        // Unknown (a queue that keeps no finished jobs, Celery without `result_extended`, samples
        // older than the rates) is a gap, not a 0.
        throughput: q?.throughput ?? null,
        failedPerMinute: q?.failedPerMinute ?? null,
      },
    });
  }
  return points;
}

/**
 * Where the rates of the newest sample that read the queue (and its rates) came from, and what it
 * could not know: a rate the queue's sample lacks is unknown for the system's reason, else (BullMQ)
 * because the queue keeps no finished job of that outcome.
 */
export function trendRates(
  samples: readonly Sample[],
  system: string,
  queue: string,
  from: number,
  to: number,
): TrendRates | undefined {
  for (let i = samples.length - 1; i >= 0; i--) {
    const sample = samples[i]!;
    if (sample.at < from || sample.at > to) continue;
    const s = sample.systems.find((x) => x.name === system);
    const q = s?.ok ? s.queues.find((x) => x.name === queue) : undefined;
    if (!s || !q || !s.rates) continue;
    const why: UnknownRate = s.rates.unknown ?? 'notKept';
    return {
      type: s.type,
      source: q.rateSource ?? (factsOfKind(s.type).ratesFromResults ? 'results' : 'jobs'),
      estimated: s.rates.estimated === true,
      unknown: {
        ...(q.throughput === undefined ? { completed: why } : {}),
        ...(q.failedPerMinute === undefined ? { failed: why } : {}),
      },
    };
  }
  return undefined;
}

const isState = (metric: string): metric is TrendState =>
  (TREND_STATES as readonly string[]).includes(metric);

/** Rules watching this queue on one of the drawn states: their thresholds are lines on the chart. */
export function trendThresholds(
  rules: readonly EscalationRule[],
  system: string,
  queue: string,
): TrendThreshold[] {
  return rules.flatMap((rule): TrendThreshold[] => {
    if (!isState(rule.metric) || !ruleMatches(rule, system, queue)) return [];
    const comparator = rule.above !== undefined ? 'above' : 'below';
    const value = rule.above ?? rule.below;
    return value === undefined ? [] : [{ rule: rule.name, state: rule.metric, comparator, value }];
  });
}

/** The `rule|subject` keys of the rules watching this queue (any metric), for the alert history. */
export function trendAlertKeys(rules: readonly EscalationRule[], system: string, queue: string): string[] {
  return rules.filter((r) => ruleMatches(r, system, queue)).map((r) => `${r.name}|${system}/${queue}`);
}

/** This queue's alerts that overlap [from, to], oldest first. */
export function trendAlertSpans(
  alerts: readonly Alert[],
  system: string,
  queue: string,
  from: number,
  to: number,
): TrendAlertSpan[] {
  const subject = `${system}/${queue}`;
  const seen = new Set<string>();
  return alerts
    .filter((a) => a.subject === subject && !seen.has(a.id) && seen.add(a.id))
    .map((a): TrendAlertSpan => {
      const end = a.resolvedAt === undefined ? undefined : Date.parse(a.resolvedAt);
      return {
        id: a.id,
        rule: a.rule,
        severity: a.severity,
        start: Date.parse(a.openedAt),
        ...(end === undefined ? {} : { end }),
      };
    })
    .filter((span) => span.start <= to && (span.end === undefined || span.end >= from))
    .sort((a, b) => a.start - b.start);
}

/** Reads what one chart needs: the window's samples and the queue's alert history. */
export async function loadTrend(
  source: TrendSource,
  rules: readonly EscalationRule[],
  target: { system: string; queue: string; window: TrendWindow },
  now: number,
): Promise<TrendData> {
  const { system, queue, window } = target;
  const from = now - TREND_WINDOWS[window];
  const [samples, alerts] = await Promise.all([
    source.samples(from, { system, queue }),
    source.alerts(trendAlertKeys(rules, system, queue)),
  ]);
  return {
    system,
    queue,
    window,
    from,
    to: now,
    points: trendPoints(samples, system, queue, from, now),
    thresholds: trendThresholds(rules, system, queue),
    alerts: trendAlertSpans(alerts, system, queue, from, now),
    ...optional('rates', trendRates(samples, system, queue, from, now)),
  };
}

/**
 * One value per time bucket (the last known sample in it), so a sparkline has a fixed width
 * whatever the sample interval; null where no sample in the bucket knew the value.
 */
export function bucketed(data: Pick<TrendData, 'points' | 'from' | 'to'>, state: TrendState, width: number) {
  const span = Math.max(1, data.to - data.from);
  const out: (number | null)[] = new Array(width).fill(null);
  for (const point of data.points) {
    const i = Math.min(width - 1, Math.max(0, Math.floor(((point.at - data.from) / span) * width)));
    const v = point.values[state];
    if (v !== null) out[i] = v;
  }
  return out;
}

/** The latest known value of each state, for the one-line summary. */
export function latestValues(points: readonly TrendPoint[]): Record<TrendState, number | null> {
  const latest: Record<TrendState, number | null> = {
    waiting: null,
    active: null,
    delayed: null,
    failed: null,
    throughput: null,
    failedPerMinute: null,
  };
  for (const state of TREND_STATES) {
    for (let i = points.length - 1; i >= 0; i--) {
      const v = points[i]!.values[state];
      if (v !== null) {
        latest[state] = v;
        break;
      }
    }
  }
  return latest;
}

/** Line colours per state; the threshold line of a state takes its state's colour. */
export const STATE_COLOURS: Record<TrendState, string> = {
  waiting: '#2f6fdb',
  active: '#1f9d55',
  delayed: '#d69e2e',
  failed: '#d64545',
  throughput: '#6b46c1',
  failedPerMinute: '#b83280',
};

export interface ChartSize {
  width: number;
  height: number;
}

/** Wide enough for a day of samples, small enough to read in a Slack thread without opening it. */
export const CHART_SIZE: ChartSize = { width: 960, height: 420 };

/** The plot area's margins inside the picture (room for the title, legend and axis labels). */
const CHART_GRID = { left: 56, right: 28, top: 48, bottom: 36 };

/** About how wide a 12 px DejaVu Sans label is: 7.2 px a character, and a little room either side. */
const labelWidth = (text: string) => Math.ceil(text.length * 7.2) + 8;
const LABEL_ROW_PX = 16;

/** Where an alert band's label sits: at its band's left or right edge, in which row from the top. */
export interface BandLabelPlace {
  align: 'left' | 'right';
  row: number;
}

/**
 * Lays out the alert bands' labels so that none is cut off at the plot's right edge (a band that
 * began a minute ago carries its label leftwards, inside the plot) and none is written over
 * another (bands close together put their labels in rows). Pure: positions in the plot's pixels.
 */
export function placeBandLabels(
  bands: readonly { start: number; end: number; label: string }[],
  from: number,
  to: number,
  plotWidth: number,
): BandLabelPlace[] {
  const x = (t: number) => ((t - from) / Math.max(1, to - from)) * plotWidth;
  const taken: { row: number; left: number; right: number }[] = [];
  const places: BandLabelPlace[] = new Array(bands.length);
  const order = bands.map((_, i) => i).sort((a, b) => bands[a]!.start - bands[b]!.start);
  for (const i of order) {
    const band = bands[i]!;
    const width = labelWidth(band.label);
    const fitsRight = x(band.start) + width <= plotWidth;
    const align = fitsRight ? 'left' : 'right';
    const left = fitsRight ? x(band.start) : Math.max(0, x(band.end) - width);
    const right = left + width;
    let row = 0;
    while (taken.some((t) => t.row === row && t.left < right + 6 && left < t.right + 6)) row++;
    taken.push({ row, left, right });
    places[i] = { align, row };
  }
  return places;
}

/** A threshold more than this many times the highest value on its axis is far: named in the legend, not drawn. */
export const FAR_THRESHOLD_FACTOR = 3;

/** The highest value drawn on the axis of `state` (depths share one axis, rates the other). */
function highestOnAxis(points: readonly TrendPoint[], state: TrendState): number {
  const axis = TREND_STATES.filter((s) => isRate(s) === isRate(state));
  return Math.max(0, ...points.flatMap((p) => axis.map((s) => p.values[s] ?? 0)));
}

/**
 * The thresholds drawn as lines on their axis, and the far ones (more than
 * {@link FAR_THRESHOLD_FACTOR} × the highest value on that axis): stretching the axis to those
 * would flatten the data along its bottom (a queue of 8,545 under a 100,000 threshold), so they
 * are named in the legend instead. Pure.
 */
export function splitThresholds(data: Pick<TrendData, 'points' | 'thresholds'>): {
  near: TrendThreshold[];
  far: TrendThreshold[];
} {
  const near: TrendThreshold[] = [];
  const far: TrendThreshold[] = [];
  for (const t of data.thresholds)
    (t.value > FAR_THRESHOLD_FACTOR * highestOnAxis(data.points, t.state) ? far : near).push(t);
  return { near, far };
}

/** Label positions along a threshold line, taken in turn by lines close enough for their labels to meet. */
const THRESHOLD_LABEL_POSITIONS = ['insideEndTop', 'insideMiddleTop', 'insideStartTop'] as const;
/** Two thresholds on one axis closer than this share of its range would write their labels over each other. */
const THRESHOLD_LABEL_GAP = 0.08;

/**
 * Where each threshold's label sits along its line: at the end, unless a threshold just below it
 * on the same axis has its label there, then the middle, then the start. Pure; by index of `near`.
 */
export function placeThresholdLabels(
  near: readonly TrendThreshold[],
  points: readonly TrendPoint[],
): (typeof THRESHOLD_LABEL_POSITIONS)[number][] {
  const places: (typeof THRESHOLD_LABEL_POSITIONS)[number][] = new Array(near.length);
  for (const rate of [false, true]) {
    const onAxis = near.map((t, i) => ({ t, i })).filter(({ t }) => isRate(t.state) === rate);
    const range = Math.max(
      1e-9,
      ...onAxis.map(({ t }) => t.value),
      ...points.flatMap((p) => TREND_STATES.filter((s) => isRate(s) === rate).map((s) => p.values[s] ?? 0)),
    );
    onAxis.sort((a, b) => a.t.value - b.t.value);
    let turn = 0;
    onAxis.forEach(({ t, i }, k) => {
      const below = onAxis[k - 1];
      turn = below && (t.value - below.t.value) / range < THRESHOLD_LABEL_GAP ? turn + 1 : 0;
      places[i] = THRESHOLD_LABEL_POSITIONS[turn % THRESHOLD_LABEL_POSITIONS.length]!;
    });
  }
  return places;
}

export interface ChartLabels {
  title: string;
  states: Record<TrendState, string>;
  /** The right-hand axis' name: jobs per minute. */
  rateAxis: string;
  threshold: (rule: string, value: string) => string;
  alert: (rule: string) => string;
  /** A count as the locale writes it (48.000 in Turkish): threshold labels and the value axis. */
  count: (n: number) => string;
  /** A rate per minute as the locale writes it (`0,4`): the rate axis and its thresholds. */
  rate: (n: number) => string;
}

/**
 * The ECharts option for one chart. Colours carry the meaning (a state's line and its threshold
 * share a colour; alerts are shaded red bands), so the chart still reads on a machine with no
 * fonts, where resvg draws no text.
 */
export function trendOption(
  data: TrendData,
  labels: ChartLabels,
  size: ChartSize = CHART_SIZE,
): Record<string, unknown> {
  const bands = data.alerts.map((a) => ({
    start: Math.max(a.start, data.from),
    end: Math.min(a.end ?? data.to, data.to),
    label: labels.alert(a.rule),
  }));
  // A rate and its axis only when some sample knew it: a chart of depths alone stays as it was.
  const known = (state: TrendState) => data.points.some((p) => p.values[state] !== null);
  const drawn = TREND_STATES.filter((s) => !isRate(s) || known(s));
  const withRate = drawn.some(isRate);
  const grid = withRate ? { ...CHART_GRID, right: 64 } : CHART_GRID;
  const places = placeBandLabels(bands, data.from, data.to, size.width - grid.left - grid.right);
  const { near, far } = splitThresholds(data);
  const labelAt = placeThresholdLabels(near, data.points);
  const thresholdName = (t: TrendThreshold) =>
    labels.threshold(t.rule, (isRate(t.state) ? labels.rate : labels.count)(t.value));
  const series = drawn.map((state) => {
    const lines = near.flatMap((t, i) =>
      t.state === state
        ? [
            {
              yAxis: t.value,
              name: thresholdName(t),
              label: { formatter: thresholdName(t), position: labelAt[i] },
            },
          ]
        : [],
    );
    const isFirst = state === TREND_STATES[0];
    return {
      name: labels.states[state],
      type: 'line',
      // A rate is not a depth: the rates have the right-hand axis to themselves.
      ...(isRate(state) ? { yAxisIndex: 1 } : {}),
      showSymbol: false,
      connectNulls: false,
      lineStyle: { width: 2, color: STATE_COLOURS[state] },
      itemStyle: { color: STATE_COLOURS[state] },
      data: data.points.map((p) => [p.at, p.values[state]]),
      ...(lines.length
        ? {
            markLine: {
              symbol: 'none',
              silent: true,
              lineStyle: { type: 'dashed', width: 2, color: STATE_COLOURS[state] },
              data: lines,
            },
          }
        : {}),
      // The alert bands hang on one series only, so each is drawn once.
      ...(isFirst && data.alerts.length
        ? {
            markArea: {
              silent: true,
              itemStyle: { color: 'rgba(214, 69, 69, 0.14)' },
              label: { color: '#9b2c2c' },
              data: bands.map((band, i) => [
                {
                  name: band.label,
                  xAxis: band.start,
                  label: {
                    position: places[i]!.align === 'left' ? 'insideTopLeft' : 'insideTopRight',
                    offset: [0, places[i]!.row * LABEL_ROW_PX],
                  },
                },
                { xAxis: band.end },
              ]),
            },
          }
        : {}),
    };
  });
  // A far threshold is a legend entry of its own: a dashed line in its state's colour, no data.
  const farSeries = far.map((t) => ({
    name: thresholdName(t),
    type: 'line',
    ...(isRate(t.state) && withRate ? { yAxisIndex: 1 } : {}),
    data: [],
    lineStyle: { type: 'dashed', width: 2, color: STATE_COLOURS[t.state] },
    itemStyle: { color: STATE_COLOURS[t.state] },
  }));
  // A near threshold above every value would sit off the chart: its axis reaches it.
  const axisMax = (rate: boolean) => {
    const state = TREND_STATES.find((s) => isRate(s) === rate)!;
    const top = Math.max(0, ...near.filter((t) => isRate(t.state) === rate).map((t) => t.value));
    return top > highestOnAxis(data.points, state) ? { max: rate ? top * 1.1 : Math.ceil(top * 1.1) } : {};
  };
  const depthAxis = {
    type: 'value',
    min: 0,
    minInterval: 1,
    axisLabel: { formatter: (value: number) => labels.count(value) },
    ...axisMax(false),
  };
  const rateAxis = {
    type: 'value',
    min: 0,
    ...axisMax(true),
    // Its name along the axis, not above it, where the legend is.
    name: labels.rateAxis,
    nameLocation: 'middle',
    nameRotate: 90,
    nameGap: 40,
    splitLine: { show: false },
    axisLabel: { formatter: (value: number) => labels.rate(value) },
  };
  return {
    animation: false,
    useUTC: true,
    backgroundColor: '#ffffff',
    textStyle: { fontFamily: 'DejaVu Sans, Liberation Sans, Arial, sans-serif' },
    title: { text: labels.title, left: 12, top: 8, textStyle: { fontSize: 15 } },
    legend: {
      top: 10,
      right: 12,
      data: [...drawn.map((s) => labels.states[s]), ...farSeries.map((f) => f.name)],
    },
    grid,
    xAxis: { type: 'time', min: data.from, max: data.to, splitLine: { show: false } },
    yAxis: withRate ? [depthAxis, rateAxis] : depthAxis,
    series: [...series, ...farSeries],
  };
}
