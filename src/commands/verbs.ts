import type { ActionName } from '../config/schema.js';
import { type Locale, messages } from '../i18n/index.js';

/**
 * What the registry knows of a verb without loading its module: its name, its line in `help`, and
 * the facts the guards and the approvals decide by. A verb's module spreads these into its
 * definition, so the two cannot disagree; the module itself (parsing, preview, reply, the
 * approved action) is imported only when the verb runs (`src/commands/registry.ts`).
 */
export interface VerbFacts {
  readonly verb: string;
  /** Changes something: only in `slack.allowedChannels`, and through policy. */
  readonly mutating: boolean;
  /** `false`: mutating, but not counted by the rate limit (see `CommandDefinition`). */
  readonly rateLimited?: boolean;
  /** Its line in `/queue help`; the read path's first verbs are described by the help builder itself. */
  readonly describe?: (locale: Locale) => { usage: string; summary: string };
  /**
   * The policy (`policies.<name>`) its approved requests run under, for a verb whose module has an
   * `action`: the approvals service knows its executor by this name before the module is loaded.
   */
  readonly policy?: ActionName;
}

export const VERBS = {
  status: { verb: 'status', mutating: false },
  dlq: { verb: 'dlq', mutating: false },
  workers: { verb: 'workers', mutating: false },
  redis: {
    verb: 'redis',
    mutating: false,
    describe: (locale) => ({ usage: messages(locale).redis.usage, summary: messages(locale).redis.summary }),
  },
  results: {
    verb: 'results',
    mutating: false,
    describe: (locale) => ({
      usage: messages(locale).results.usage,
      summary: messages(locale).results.summary,
    }),
  },
  job: {
    verb: 'job',
    mutating: false,
    describe: (locale) => ({ usage: messages(locale).job.usage, summary: messages(locale).job.summary }),
  },
  pause: {
    verb: 'pause',
    mutating: true,
    describe: (locale) => messages(locale).actions.pause,
    policy: 'pause',
  },
  resume: {
    verb: 'resume',
    mutating: true,
    describe: (locale) => messages(locale).actions.resume,
    policy: 'resume',
  },
  retry: {
    verb: 'retry',
    mutating: true,
    describe: (locale) => messages(locale).actions.retry,
    policy: 'retry',
  },
  purge: {
    verb: 'purge',
    mutating: true,
    describe: (locale) => messages(locale).purge.purge,
    policy: 'purge',
  },
  undo: { verb: 'undo', mutating: true, describe: (locale) => messages(locale).purge.undo, policy: 'undo' },
  pending: { verb: 'pending', mutating: false, describe: (locale) => messages(locale).actions.pending },
  // It runs the action: like the action itself, only in `slack.allowedChannels`.
  approve: { verb: 'approve', mutating: true, describe: (locale) => messages(locale).actions.approve },
  deny: { verb: 'deny', mutating: true, describe: (locale) => messages(locale).actions.deny },
  audit: { verb: 'audit', mutating: false, describe: (locale) => messages(locale).actions.audit },
  alerts: { verb: 'alerts', mutating: false, describe: (locale) => messages(locale).escalation.alerts },
  // Answering an alert storm must not stop at the eleventh alert.
  ack: {
    verb: 'ack',
    mutating: true,
    rateLimited: false,
    describe: (locale) => messages(locale).escalation.ack,
  },
  snooze: {
    verb: 'snooze',
    mutating: true,
    rateLimited: false,
    describe: (locale) => messages(locale).escalation.snooze,
  },
  silence: { verb: 'silence', mutating: true, describe: (locale) => messages(locale).escalation.silence },
  silences: {
    verb: 'silences',
    mutating: false,
    describe: (locale) => messages(locale).escalation.silences,
  },
  unsilence: {
    verb: 'unsilence',
    mutating: true,
    describe: (locale) => messages(locale).escalation.unsilence,
  },
  scale: {
    verb: 'scale',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).scale.usage.scale,
      summary: messages(locale).scale.summary.scale,
    }),
    policy: 'scale',
  },
  restart: {
    verb: 'restart',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).restart.usage,
      summary: messages(locale).restart.summary,
    }),
    policy: 'restart',
  },
  stuck: {
    verb: 'stuck',
    mutating: false,
    describe: (locale) => ({
      usage: messages(locale).scale.usage.stuck,
      summary: messages(locale).scale.summary.stuck,
    }),
  },
  revoke: {
    verb: 'revoke',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).scale.usage.revoke,
      summary: messages(locale).scale.summary.revoke,
    }),
    policy: 'revoke',
  },
  fail: {
    verb: 'fail',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).scale.usage.fail,
      summary: messages(locale).scale.summary.fail,
    }),
    policy: 'fail',
  },
  'expire-results': {
    verb: 'expire-results',
    mutating: true,
    describe: (locale) => messages(locale).results.expire,
    policy: 'expire-results',
  },
  'rate-limit': {
    verb: 'rate-limit',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).limits.usage.rateLimit,
      summary: messages(locale).limits.summary.rateLimit,
    }),
    policy: 'rate-limit',
  },
  concurrency: {
    verb: 'concurrency',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).limits.usage.concurrency,
      summary: messages(locale).limits.summary.concurrency,
    }),
    policy: 'concurrency',
  },
  timeline: { verb: 'timeline', mutating: false, describe: (locale) => messages(locale).timeline.describe },
  trend: { verb: 'trend', mutating: false, describe: (locale) => messages(locale).trend.describe },
  why: {
    verb: 'why',
    mutating: false,
    describe: (locale) => ({ usage: messages(locale).why.usage, summary: messages(locale).why.summary }),
  },
} as const satisfies Record<string, VerbFacts>;
