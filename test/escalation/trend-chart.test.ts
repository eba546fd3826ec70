import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatNumber, formatRate } from '../../src/blocks/format.js';
import { configSchema } from '../../src/config/schema.js';
import { renderChartPng, trendFile } from '../../src/escalation/render-chart.js';
import { alertWindow } from '../../src/escalation/runtime.js';
import type { Sample } from '../../src/escalation/samples.js';
import {
  placeBandLabels,
  STATE_COLOURS,
  type TrendData,
  trendAlertSpans,
  trendOption,
  trendPoints,
  trendThresholds,
} from '../../src/escalation/trend.js';
import type { Alert } from '../../src/store/alert.js';
import { decodePng, pixelAt, pixelDifference } from '../helpers/png.js';

/**
 * The chart as a picture: rendered from fixed samples and compared, pixel by pixel under a
 * tolerance, with a reference PNG that was looked at by a person. `UPDATE_CHART_FIXTURES=1`
 * rewrites the reference (look at it again before committing it).
 */
const REFERENCE = resolve(import.meta.dirname, '../fixtures/charts/trend-dispatch-ios-1h.png');
const T0 = Date.parse('2030-03-01T09:00:00.000Z');
const MINUTE = 60_000;

/** An hour of one-minute samples: a backlog builds to 140, is worked off, and two jobs fail. */
function samples(): Sample[] {
  return Array.from({ length: 61 }, (_, i): Sample => {
    const waiting = i < 30 ? i * 5 - Math.max(0, i - 25) * 3 : Math.max(0, 140 - (i - 30) * 6);
    return {
      at: T0 + i * MINUTE,
      systems: [
        {
          name: 'pushizo',
          type: 'bullmq',
          // Minutes 50–52: Redis unreachable; the lines have a gap there rather than a drop to 0.
          ok: i < 50 || i > 52,
          workers: ['w1'],
          queues: [
            {
              name: 'dispatch-ios',
              waiting,
              active: i < 5 ? 0 : 8 + (i % 3),
              delayed: i > 10 && i < 40 ? 20 : 4,
              failed: i < 35 ? 1 : 3,
              oldestWaitingSeconds: null,
              workers: 1,
            },
            {
              name: 'webhooks',
              waiting: 999,
              active: 0,
              delayed: 0,
              failed: 0,
              oldestWaitingSeconds: null,
              workers: 1,
            },
          ],
        },
      ],
    };
  });
}

const rules = configSchema.parse({
  systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1', queues: ['dispatch-ios'] }],
  escalation: {
    rules: [
      { name: 'backlog', metric: 'waiting', above: 100, queues: ['pushizo/dispatch-*'] },
      { name: 'failures', metric: 'failed', above: 50, queues: ['pushizo/*'] },
      { name: 'other-queue', metric: 'waiting', above: 10, queues: ['pushizo/webhooks'] },
      { name: 'latency', metric: 'oldestWaitingSeconds', above: 600 },
    ],
  },
}).escalation.rules;

const alert = (over: Partial<Alert>): Alert => ({
  id: 'a-0000feed',
  key: 'backlog|pushizo/dispatch-ios',
  rule: 'backlog',
  metric: 'waiting',
  severity: 'critical',
  subject: 'pushizo/dispatch-ios',
  system: 'pushizo',
  queue: 'dispatch-ios',
  comparator: 'above',
  threshold: 100,
  status: 'resolved',
  value: 0,
  worst: 140,
  series: [],
  clearing: 0,
  openedAt: new Date(T0 + 21 * MINUTE).toISOString(),
  updatedAt: new Date(T0 + 38 * MINUTE).toISOString(),
  resolvedAt: new Date(T0 + 38 * MINUTE).toISOString(),
  lastNotifiedAt: new Date(T0 + 21 * MINUTE).toISOString(),
  version: 3,
  ...over,
});

function data(): TrendData {
  const from = T0;
  const to = T0 + 60 * MINUTE;
  return {
    system: 'pushizo',
    queue: 'dispatch-ios',
    window: '1h',
    from,
    to,
    points: trendPoints(samples(), 'pushizo', 'dispatch-ios', from, to),
    thresholds: trendThresholds(rules, 'pushizo', 'dispatch-ios'),
    alerts: trendAlertSpans(
      [
        alert({}),
        // Another queue's alert, and one that ended before the window: neither is drawn.
        alert({ id: 'a-other', subject: 'pushizo/webhooks', queue: 'webhooks' }),
        alert({
          id: 'a-old',
          openedAt: new Date(T0 - 90 * MINUTE).toISOString(),
          resolvedAt: new Date(T0 - 80 * MINUTE).toISOString(),
        }),
      ],
      'pushizo',
      'dispatch-ios',
      from,
      to,
    ),
  };
}

describe('trend chart', () => {
  it('takes thresholds from the rules watching the queue’s states, and only this queue’s alerts', () => {
    const d = data();
    expect(d.thresholds).toEqual([
      { rule: 'backlog', state: 'waiting', comparator: 'above', value: 100 },
      { rule: 'failures', state: 'failed', comparator: 'above', value: 50 },
    ]);
    expect(d.alerts.map((a) => [a.id, a.start - T0, a.end! - T0])).toEqual([
      ['a-0000feed', 21 * MINUTE, 38 * MINUTE],
    ]);
    expect(d.points).toHaveLength(61);
    expect(d.points[51]!.values).toEqual({
      throughput: null,
      failedPerMinute: null,
      waiting: null,
      active: null,
      delayed: null,
      failed: null,
    });
  });

  it('an alert’s chart takes the shortest window that shows its start', () => {
    expect(alertWindow(T0, T0 + 5 * MINUTE)).toBe('1h');
    expect(alertWindow(T0, T0 + 55 * MINUTE)).toBe('6h');
    expect(alertWindow(T0, T0 + 7 * 60 * MINUTE)).toBe('24h');
    expect(alertWindow(T0, T0 + 30 * 60 * MINUTE)).toBe('24h');
  });

  it('renders the reference picture: depth lines by state, threshold lines, the alert band', async () => {
    const png = (await trendFile(data(), 'en')).content;
    // UPDATE_CHART_FIXTURES=1 redraws the reference on purpose; a missing one is a failure, never
    // a reference drawn by the code under test.
    if (process.env.UPDATE_CHART_FIXTURES === '1') writeFileSync(REFERENCE, png);
    expect(existsSync(REFERENCE), `${REFERENCE} is missing (UPDATE_CHART_FIXTURES=1 draws it)`).toBe(true);
    const actual = decodePng(png);
    const reference = decodePng(readFileSync(REFERENCE));
    expect([actual.width, actual.height]).toEqual([960, 420]);
    // Anti-aliasing and font versions move a few edge pixels; a changed line moves thousands. The
    // reference was drawn with DejaVu Sans (Debian's fonts-dejavu-core); other fonts shift text.
    expect(pixelDifference(actual, reference)).toBeLessThan(0.004);
  });

  it("writes counts the locale's way on threshold labels and the value axis (30.000 in Turkish)", () => {
    const d = data();
    const big: TrendData = { ...d, thresholds: d.thresholds.map((t) => ({ ...t, value: 30_000 })) };
    const option = trendOption(big, { ...labels, count: (n) => formatNumber(n, 'tr') }) as {
      legend: { data: string[] };
      yAxis: { axisLabel: { formatter: (n: number) => string } };
    };
    // 30.000 over a queue of 140 is far: named in the legend.
    const names = option.legend.data.filter((name) => /^(backlog|failures) /.test(name));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/ 30\.000$/);
    expect(option.yAxis.axisLabel.formatter(70_000)).toBe('70.000');
  });

  it('the comparison would catch a different chart (thresholds moved, the alert band gone)', async () => {
    const d = data();
    const changed: TrendData = {
      ...d,
      thresholds: d.thresholds.map((t) => ({ ...t, value: t.state === 'waiting' ? 40 : 20 })),
      alerts: [],
    };
    const png = decodePng(await renderChartPng(trendOption(changed, labels)));
    // Well over the tolerance: the comparison has teeth.
    expect(pixelDifference(png, decodePng(readFileSync(REFERENCE)))).toBeGreaterThan(0.01);
  });

  it('draws meaning in colour, so it reads without fonts: the waiting line, the red alert band', async () => {
    const png = decodePng(await renderChartPng(trendOption(data(), { ...labels, title: '' })));
    const colours = new Set<string>();
    for (let y = 0; y < png.height; y += 1)
      for (let x = 0; x < png.width; x += 2) colours.add(pixelAt(png, x, y).slice(0, 3).join(','));
    const hex = (h: string) => [1, 3, 5].map((i) => Number.parseInt(h.slice(i, i + 2), 16)).join(',');
    expect(colours.has(hex(STATE_COLOURS.waiting))).toBe(true);
    expect(colours.has(hex(STATE_COLOURS.failed))).toBe(true);
    // The band: white under 14% of the alert red.
    const band = [...colours].some((c) => {
      const [r, g, b] = c.split(',').map(Number) as [number, number, number];
      return r > 240 && g > 220 && g < 235 && b > 220 && b < 235;
    });
    expect(band).toBe(true);
  });
});

describe('alert band labels', () => {
  const HOUR = 60 * MINUTE;
  const span = (rule: string, startMin: number, endMin?: number) => ({
    id: `a-${rule}`,
    rule,
    severity: 'critical' as const,
    start: T0 + startMin * MINUTE,
    ...(endMin === undefined ? {} : { end: T0 + endMin * MINUTE }),
  });

  describe('placeBandLabels', () => {
    const band = (startMin: number, endMin: number, label: string) => ({
      start: T0 + startMin * MINUTE,
      end: T0 + endMin * MINUTE,
      label,
    });
    /** One band at the right edge, two close together, one on its own, in a chart 876 px wide. */
    const placed = () =>
      placeBandLabels(
        [
          band(58, 60, 'alert: backlog'),
          band(10, 11, 'alert: dlq-growth'),
          band(12, 14, 'alert: no-workers'),
          band(30, 40, 'alert: x'),
        ],
        T0,
        T0 + HOUR,
        876,
      );

    it('a band near the right edge labels leftwards', () => {
      expect(placed()[0]).toEqual({ align: 'right', row: 0 });
    });

    it('close bands take rows', () => {
      expect(placed().slice(1)).toEqual([
        { align: 'left', row: 0 },
        { align: 'left', row: 1 },
        { align: 'left', row: 0 },
      ]);
    });
  });

  it('a still-firing alert that began two minutes ago keeps its whole label inside the picture', async () => {
    const d = data();
    const png = decodePng(
      await renderChartPng(
        trendOption(
          { ...d, thresholds: [], alerts: [span('backlog-with-a-long-name', 58)] },
          { ...labels, title: '' },
        ),
      ),
    );
    // The label's dark red (#9b2c2c), anti-aliased: reddish pixels well darker than the band.
    const isLabel = (x: number, y: number) => {
      const [r, g, b] = pixelAt(png, x, y) as [number, number, number];
      return r > g + 50 && r > b + 50 && r < 220;
    };
    const columns = (from: number, to: number) => {
      const hits: number[] = [];
      for (let x = from; x < to; x++) for (let y = 48; y < 80; y++) if (isLabel(x, y)) hits.push(x);
      return hits;
    };
    // Written inside the plot, ending at the band's right edge (x 932), not past the picture's edge.
    expect(columns(600, 932).length).toBeGreaterThan(20);
    expect(columns(936, 960)).toEqual([]);
  });
});

const labels = {
  title: 'pushizo/dispatch-ios · last 1h (UTC)',
  states: {
    waiting: 'waiting',
    active: 'active',
    delayed: 'delayed',
    failed: 'failed',
    throughput: 'done/min',
    failedPerMinute: 'failed/min',
  },
  rateAxis: 'per min',
  threshold: (rule: string, value: string) => `${rule} ${value}`,
  alert: (rule: string) => `alert: ${rule}`,
  count: (n: number) => formatNumber(n, 'en'),
  rate: (n: number) => formatRate(n, 'en'),
};

describe('thresholds on the chart', () => {
  type Option = {
    legend: { data: string[] };
    yAxis: { max?: number } | { max?: number }[];
    series: { name: string; markLine?: { data: { name: string; label: { position: string } }[] } }[];
  };
  const option = (d: TrendData) => trendOption(d, labels) as Option;
  const drawnLines = (o: Option) => o.series.flatMap((x) => x.markLine?.data ?? []);
  const depthAxis = (o: Option) => (Array.isArray(o.yAxis) ? o.yAxis[0]! : o.yAxis);

  it('a threshold far above the data (a queue of 140 under 100,000) is named in the legend, and the axis stays on the data', () => {
    const d = data();
    const far: TrendData = {
      ...d,
      thresholds: [...d.thresholds, { rule: 'flood', state: 'waiting', comparator: 'above', value: 100_000 }],
    };
    const o = option(far);
    expect(o.legend.data).toContain('flood 100,000');
    expect(drawnLines(o).map((l) => l.name)).not.toContain('flood 100,000');
    expect(depthAxis(o).max).toBeUndefined();
    // A near one above the data still stretches the axis to itself, drawn.
    const near: TrendData = {
      ...d,
      thresholds: [{ rule: 'backlog', state: 'waiting', comparator: 'above', value: 300 }],
    };
    expect(depthAxis(option(near)).max).toBe(330);
    expect(drawnLines(option(near)).map((l) => l.name)).toEqual(['backlog 300']);
  });

  it('thresholds close together put their labels at different places along their lines', () => {
    const d = data();
    const close: TrendData = {
      ...d,
      thresholds: [
        { rule: 'backlog', state: 'waiting', comparator: 'above', value: 100 },
        { rule: 'backlog-high', state: 'waiting', comparator: 'above', value: 104 },
        { rule: 'delayed', state: 'delayed', comparator: 'above', value: 102 },
        { rule: 'apart', state: 'waiting', comparator: 'above', value: 40 },
      ],
    };
    const lines = drawnLines(option(close));
    const at = Object.fromEntries(lines.map((l) => [l.name.split(' ')[0], l.label.position]));
    expect(new Set([at.backlog, at['backlog-high'], at.delayed]).size).toBe(3);
    expect(at.apart).toBe('insideEndTop');
  });
});
