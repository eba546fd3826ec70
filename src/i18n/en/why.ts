/**
 * `/queue why`: the verdict, each cause with its evidence and fixes, the checks made. Evidence
 * lines get their values already formatted (`p`: counts with separators, times, durations, names
 * as code) and the raw numbers (`n`) for plurals.
 */
type P = Record<string, string>;
type N = Record<string, number>;

const s = (n: number | undefined, one: string, many: string) => (n === 1 ? one : many);
/** A formatted count read back as a number, for English plurals. */
const one = (formatted: string | undefined) => (formatted === '1' ? 1 : 2);

export const why = {
  usage: '/queue why <system>[/<queue>]',
  summary: 'why work backs up: the runbooks’ causes the evidence supports, each with its evidence and fix',
  title: (target: string) => `Why: ${target}`,
  verdict: {
    cause: 'Cause found',
    unclear: 'No clear cause: the evidence does not settle it',
    healthy: 'Nothing is wrong',
  },
  healthyLine: 'Every check found nothing wrong:',
  unclearLine: 'Nothing here is certain; what each check found:',
  confidence: { strong: 'strong', possible: 'possible' },
  cause: {
    'no-workers': 'No workers',
    'no-capacity': 'Not enough capacity',
    'stuck-tasks': 'Stuck tasks hold the slots',
    'redis-memory': 'Redis memory is full',
    'task-burst': 'A burst of tasks',
    'retry-loop': 'A retry loop',
    'redis-network': 'The network to Redis is unstable',
    'slow-dependency': 'A slow dependency',
    paused: 'The queue is paused',
    'jobs-vanished': 'Jobs vanished',
  },
  causeLine: (title: string, confidence: string, queues: string) =>
    queues ? `*${title}* (${confidence}) · ${queues}` : `*${title}* (${confidence})`,
  moreQueues: (n: number) => `+${n} more`,
  rule: (name: string) => `alert rule \`${name}\``,
  checkResult: { found: 'found', 'not-found': 'nothing', unknown: 'could not tell' },
  checkLine: (cause: string, result: string, reason: string | null) =>
    reason ? `${cause}: ${result} (${reason})` : `${cause}: ${result}`,
  reason: {
    workersNotAsked: 'the workers did not answer the inspection',
    runningNotRead: 'the running work could not be read',
    redisNotRead: 'Redis’ INFO could not be read',
    noRates: 'no rates to compare with',
    thisReadOnly: 'this read only: no monitor samples',
    noSamples: 'no monitor samples to compare with',
  } as Record<string, string>,
  nothingToClick: 'Nothing to click for this one.',
  fixesLabel: 'Fix:',
  note: {
    usual: (queue: string, note: string) => `The runbook’s usual cause for ${queue}: “${note}”`,
    yes: (cause: string) => `live evidence agrees (${cause})`,
    elsewhere: (cause: string) => `live evidence points elsewhere: ${cause}`,
    nothing: 'live evidence shows none of it now',
  },
  fixGone: 'The evidence no longer calls for that fix. Run `/queue why` again for what it calls for now.',
  badFix: 'Not a fix of `why`: a fix key is 12 hexadecimal characters, from a fix button.',
  generated: (at: string) => `Read at ${at}`,
  evidence: {
    noConsumer: (p: P, n: N) =>
      n.queues! > 1
        ? `${p.waiting} waiting on ${p.queues} queues (${p.queue} the deepest) with no worker consuming them`
        : `${p.waiting} waiting on ${p.queue} with no worker consuming it`,
    noConsumerSince: (p: P) => `${p.queue} has had no consumer since ${p.sinceAt}`,
    oldestWaiting: (p: P) => `the oldest job on ${p.queue} has waited ${p.ageSeconds}`,
    workerLeft: (p: P) => `worker ${p.worker} stopped answering after ${p.lastSeenAt}`,
    workersNow: (p: P) =>
      `${p.now} ${s(one(p.now), 'worker answers', 'workers answer')} now; recent samples had up to ${p.before}`,
    workersSteady: (p: P) =>
      `${p.now} ${s(one(p.now), 'worker answers', 'workers answer')} now, no fewer than in recent samples`,
    pausedBehind: (p: P) => `${p.queue} is paused with ${p.waiting} waiting behind it`,
    pausedBy: (p: P) => `paused by ${p.by} at ${p.sinceAt}`,
    stuckRunning: (p: P) =>
      p.sinceAt
        ? `${p.count} ${s(one(p.count), 'task has', 'tasks have')} run longer than ${p.minutes} min (${p.name} since ${p.sinceAt})`
        : `${p.count} ${s(one(p.count), 'task has', 'tasks have')} run longer than ${p.minutes} min (${p.name})`,
    lockExpired: (p: P) =>
      `${p.count} active ${s(one(p.count), 'job has lost its lock', 'jobs have lost their lock')}: no live worker holds ${s(one(p.count), 'it', 'them')} (stalled)`,
    slotsHeld: (p: P) => `${p.held} of ${p.slots} slots of ${p.worker} are held by them`,
    waitingBehind: (p: P) => `${p.waiting} waiting behind them on ${p.queue}`,
    stalledFailed: (p: P) => `${p.count} jobs of ${p.queue} failed as stalled (maxStalledCount)`,
    memoryUsed: (p: P) => `Redis uses ${p.usedBytes} of ${p.maxBytes} (${p.percent}%), policy ${p.policy}`,
    writesRefused: (p: P) => `Redis has refused ${p.count} writes for memory (OOM)`,
    keysEvicted: (p: P) => `${p.count} keys evicted under ${p.policy}: lost jobs`,
    largestQueue: (p: P) => `the largest queue is ${p.queue} with ${p.waiting} waiting`,
    arrivals: (p: P) => `${p.perMinute}/min arriving on ${p.queue}, against ${p.usual}/min usually`,
    waitingNow: (p: P) =>
      p.ageSeconds
        ? `${p.waiting} waiting on ${p.queue}, all within ${p.ageSeconds}`
        : `${p.waiting} waiting on ${p.queue}`,
    dominantName: (p: P) => `${p.name} is ${p.percent}% of what waits next`,
    retrying: (p: P) => `${p.count} of ${p.sampled} messages looked at are retries`,
    retryingTask: (p: P) => `${p.name}: ${p.count} retrying, up to ${p.retries} retries`,
    attemptsUsed: (p: P) => `failures on ${p.queue} used up to ${p.attempts} attempts`,
    failingPerMinute: (p: P) => `${p.queue} fails ${p.perMinute}/min, ${p.delayed} delayed for another try`,
    samplesFailed: (p: P) =>
      `${p.failed} of ${p.of} monitor reads in the last ${p.minutes} min could not reach Redis, between ones that did`,
    unreachableNow: () => 'Redis does not answer now, and it did a moment ago',
    slowRoundTrip: (p: P) =>
      `round trips to Redis reach ${p.ms} ms (above ${p.threshold} ms in ${p.samples} of ${p.of} monitor samples)`,
    youngConnections: (p: P) =>
      `all ${p.count} worker connections are younger than ${p.seconds}, on a Redis up for ${p.uptimeSeconds}`,
    reconnects: (p: P) =>
      `${p.count} worker connections replaced ones that dropped, in ${p.samples} of ${p.of} monitor samples of the last ${p.minutes} min${p.young ? ` (newest: ${p.young} of ${p.others} connections new since the sample before)` : ''}`,
    workersReturned: (p: P) =>
      `workers dropped out of the worker list and came back under the same name ${p.count} ${s(one(p.count), 'time', 'times')} in the last ${p.minutes} min`,
    connectionsRejected: (p: P) => `Redis refused ${p.count} connections in the last ${p.minutes} min`,
    silentConsumers: (p: P) =>
      `${p.count} queues have consumers and waiting work, yet nothing was done for minutes (${p.queues})`,
    oldestConnection: (p: P) => `the oldest worker connection now is ${p.ageSeconds} old`,
    callWho: (p: P) => `call ${p.who}`,
    dependencyErrors: (p: P) => `${p.count} of the newest ${p.of} failures on ${p.queue} say ${p.error}`,
    runP95: (p: P) => `run time p95 on ${p.queue} is ${p.seconds}`,
    runP95Before: (p: P) => `it was ${p.seconds} in the monitor’s samples`,
    delayedNow: (p: P) => `${p.delayed} delayed on ${p.queue}, waiting for another try`,
    redisRestarted: (p: P, n: N) =>
      n.keys
        ? `Redis restarted at ${p.sinceAt} and loaded ${p.keys} keys from disk`
        : `Redis restarted at ${p.sinceAt}`,
    noSamplesToCompare: () => 'no monitor samples from before to compare the queues with',
    depthFell: (p: P) =>
      `${p.queue} held ${p.before} at ${p.beforeAt} and holds ${p.now} now, with no completions to explain it`,
    recover: () => 'recovery: the runbook’s `queue:recover` (restore.md §5)',
    drainMinutes: (p: P) =>
      `${p.waiting} waiting on ${p.queue} at ${p.perMinute}/min: ${p.minutes} min to drain`,
    waitingRising: (p: P) => `${p.queue} has grown in each of the last ${p.samples} samples`,
    slotsFull: (p: P) => `every slot of its ${p.workers} ${s(one(p.workers), 'worker', 'workers')} is busy`,
  } as Record<string, (p: P, n: N) => string>,
};
