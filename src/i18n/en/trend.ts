/** Strings of `/queue trend` and of the charts in alert threads. Names arrive escaped for mrkdwn. */
export const trend = {
  describe: {
    usage: 'trend <system>/<queue> [1h|6h|24h]',
    summary:
      'a chart of the queue’s depth by state and its jobs done and failed per minute over time, with alert thresholds and alerts',
  },
  usage: '/queue trend <system>/<queue> [1h|6h|24h]',
  /** The command line also writes the chart to a file. */
  cliUsage: '/queue trend <system>/<queue> [1h|6h|24h] [--out file.png]',
  needsQueue: 'Name a queue: `/queue trend <system>/<queue>`.',
  badWindow: (text: string) => `\`${text}\` is not a window.`,
  validWindow: 'the window is one of 1h, 6h, 24h (default 1h)',
  outNeedsPath: '`--out` needs a file name, e.g. `--out chart.png`.',
  outOnlyCli: '`--out` writes a file on the command line; in Slack the chart is uploaded.',
  needsStore: 'the monitor’s samples (the bot’s store could not be opened)',
  title: (target: string, window: string) => `Trend ${target} · last ${window}`,
  chartTitle: (target: string, window: string) => `${target} · last ${window} (UTC)`,
  states: {
    waiting: 'waiting',
    active: 'active',
    delayed: 'delayed',
    failed: 'failed',
    throughput: 'done/min',
    failedPerMinute: 'failed/min',
  },
  rateAxis: 'per min',
  line: (state: string, spark: string, latest: string) => `${state.padEnd(10)} ${spark} ${latest}`,
  unknown: '?',
  samples: (n: number, from: string, to: string) =>
    `${n} ${n === 1 ? 'sample' : 'samples'} from ${from} to ${to}`,
  noSamples: (target: string, window: string) =>
    `No samples of \`${target}\` in the last ${window}. The monitor records them while the bot runs (or \`monitor --once\` from cron).`,
  /** What the rates are computed from, after the samples line. */
  rates: (source: string) =>
    `done/min and failed/min: jobs finished in the 5 minutes before each sample, ${source}.`,
  rateSource: {
    jobs: 'counted in the queue’s completed and failed sets by when they finished',
    metrics: 'from BullMQ’s own per-minute metrics',
    results: 'from the result backend’s `date_done` (tasks with `ignore_result` are not counted)',
  },
  rateEstimated: ' (estimated from part of the result backend)',
  noRates: 'done/min and failed/min: no sample of this window has them.',
  thresholds: (list: string) => `Thresholds: ${list}`,
  threshold: (rule: string, value: string) => `${rule} ${value}`,
  thresholdItem: (rule: string, state: string, comparator: string, value: string) =>
    `${rule} (${state} ${comparator} ${value})`,
  alerts: (list: string) => `Alerts: ${list}`,
  alertItem: (id: string, from: string, to: string) => `${id} ${from}–${to}`,
  stillFiring: 'now',
  alertBand: (rule: string) => `alert: ${rule}`,
  chartAttached: 'Chart attached.',
  inThread: 'Chart attached in the alert’s thread.',
  wrote: (path: string, bytes: string) => `Wrote ${path} (${bytes} bytes).`,
  writeFailed: (path: string, reason: string) => `Could not write ${path}: ${reason}`,
  alertChartTitle: (target: string) => `Depth of ${target}`,
};
