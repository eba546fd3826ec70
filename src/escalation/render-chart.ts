import { formatNumber, formatRate } from '../blocks/format.js';
import { type Locale, messages } from '../i18n/index.js';
import { loadEcharts, loadResvg } from '../lib/lazy.js';
import { CHART_SIZE, type ChartSize, type TrendData, trendOption } from './trend.js';

/**
 * An ECharts option rendered server-side: ECharts' SSR SVG string, turned into a PNG by resvg
 * with the machine's fonts. Without any font installed resvg draws no text; the chart is made to
 * read by colour and shading alone then (see `trendOption`).
 */
export async function renderChartPng(
  option: Record<string, unknown>,
  size: ChartSize = CHART_SIZE,
): Promise<Buffer> {
  const [echarts, { Resvg }] = await Promise.all([loadEcharts(), loadResvg()]);
  const chart = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: size.width,
    height: size.height,
  });
  let svg: string;
  try {
    chart.setOption(option);
    svg = chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
  const resvg = new Resvg(svg, {
    background: '#ffffff',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/** The chart of `data` as a PNG file named after its queue and window. */
export async function trendFile(
  data: TrendData,
  locale: Locale,
): Promise<{ filename: string; title: string; content: Buffer }> {
  const t = messages(locale).trend;
  const target = `${data.system}/${data.queue}`;
  const content = await renderChartPng(
    trendOption(data, {
      title: t.chartTitle(target, data.window),
      states: t.states,
      rateAxis: t.rateAxis,
      threshold: t.threshold,
      alert: t.alertBand,
      count: (n) => formatNumber(n, locale),
      rate: (n) => formatRate(n, locale),
    }),
  );
  const safe = `${data.system}-${data.queue}`.replace(/[^\w.-]+/g, '_').slice(0, 80);
  return { filename: `trend-${safe}-${data.window}.png`, title: t.title(target, data.window), content };
}
