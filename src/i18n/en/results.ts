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
  hint: 'Results without a TTL stay until deleted: set Celery’s `result_expires` (the runbook’s EXPIRE loop over KEYS blocks Redis).',
};
