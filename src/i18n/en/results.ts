/** Strings of `/queue results <system>`. */
export const results = {
  usage: '/queue results <system>',
  summary:
    'Celery results in the result backend (celery-task-meta-*): how many, how many never expire, memory, the oldest',
  title: (system: string) => `Celery results of ${system}`,
  fallback: (system: string, count: string, withoutTtl: string) =>
    `${system}: ${count} results, ${withoutTtl} without a TTL`,
  counts: (count: string, withoutTtl: string, percent: number) =>
    `*${count}* results · *${withoutTtl}* without a TTL (${percent}%): Redis never expires those`,
  memory: (bytes: string) => `memory: ${bytes}`,
  oldest: (age: string, at: string, id: string) => `oldest: done ${age} ago (${at}), task \`${id}\``,
  none: 'No results stored.',
  complete: (total: string) => `Counted over all ${total} keys of the result backend.`,
  sampled: (scanned: string, total: string, stoppedBy: string) =>
    `A sample: ${scanned} of ${total} keys walked before the ${stoppedBy} budget ran out; the counts are of that part.`,
  estimate: (count: string, withoutTtl: string, bytes: string) =>
    `Scaled to the whole keyspace: about ${count} results, ${withoutTtl} without a TTL, ${bytes}.`,
  budget: { keys: 'key', time: 'time', done: 'no' } as Record<string, string>,
  hint: (system: string) =>
    `Results without a TTL stay until deleted: set Celery’s \`result_expires\`, and give the ones already stored a TTL with \`/queue expire-results ${system}\` (the runbook’s EXPIRE loop over KEYS blocks Redis).`,
  /** `/queue expire-results <system> [ttl]`: an action under `policies.expire-results`. */
  expire: {
    usage: '/queue expire-results <system> [ttl]',
    summary: 'give the Celery results without a TTL one (default 1d), in bounded batches; asks for approval',
  },
  badTtl: (text: string) => `\`${text}\` is not a TTL.`,
  ttlValid: 'a duration from 1m to 365d: 30m, 12h, 1d, 7d',
  /** The approvers' preview; numbers arrive formatted. */
  expirePreview: (system: string, withoutTtl: string, complete: boolean, ttl: string, results: string) =>
    `expire-results ${system}: ${complete ? '' : 'at least '}${withoutTtl} of ${results} Celery results have no TTL and get ${ttl}; ` +
    'results with a TTL keep theirs. Redis deletes each one when its TTL runs out.' +
    (complete ? '' : ' (The count stopped at its time budget; the run walks every key.)'),
  nothingToExpire: 'expiring (every result has a TTL)',
  /** The outcome line of the finished request. */
  expired: (system: string, expired: string, ttl: string, results: string) =>
    `${expired} Celery results of ${system} given a TTL of ${ttl} (of ${results} walked; the others had one)`,
};
