/** Strings of `/queue help`. */
export const help = {
  title: '/queue commands',
  intro:
    'Queues are addressed as `system/queue`; a Celery queue name may itself contain `:`. *Waiting* is every job ready to run, prioritized ones included: status, the pause preview, trend and alerts all count it so; status also says how many of them are prioritized.',
  line: (usage: string, summary: string) => `\`/queue ${usage}\` — ${summary}`,
  more: (n: number) => `… and ${n} more ${n === 1 ? 'command' : 'commands'}.`,
  footer: (shared: string, own: string) =>
    `Read-only commands work in any channel the bot is in. Everyone in the channel sees: ${shared}. Only you see: ${own}, errors and refusals.`,
  fallback: (verbs: string) => `/queue commands: ${verbs}`,
  /** The read path's verbs; later verbs are passed to `helpMessage` by the command registry. */
  verbs: [
    {
      verb: 'status',
      usage: 'status [system[/queue]]',
      summary:
        'queue depth by state, flags (backlog, failures, paused, no workers), Redis memory and workers',
    },
    {
      verb: 'dlq',
      usage: 'dlq <system>/<queue> [limit]',
      summary:
        'the newest failed jobs (default 10, at most 100) and the most frequent errors; never job data',
    },
    {
      verb: 'workers',
      usage: 'workers [system]',
      summary: 'workers, the queues they consume and their longest-running task',
    },
    { verb: 'help', usage: 'help', summary: 'this list' },
  ],
};
