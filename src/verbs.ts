import type { ActionName, Role } from './config/schema.js';
import { type Locale, messages } from './i18n/index.js';
import { expireResultsOutcome, expireResultsTimeline } from './verbs/expire-results.js';
import { pauseOutcome, pauseTimeline, resumeOutcome, resumeTimeline } from './verbs/pause.js';
import { purgeOutcome, purgeTimeline, undoOutcome, undoTimeline } from './verbs/purge.js';
import { retryOutcome, retryTimeline } from './verbs/retry.js';
import type { OutcomeWording, TimelineWording } from './verbs/wording.js';
import { failTimeline, restartTimeline, revokeTimeline, scaleTimeline } from './verbs/workers.js';

export type { ActionResult, OutcomeRequest, OutcomeWording, TimelineWording } from './verbs/wording.js';

/**
 * The report an approved action's result is, for the verbs whose result the blocks word in full
 * (`src/blocks/scale.ts`): a worker group's changes, a restart's come-back, a revoke's answers, a
 * job failed by hand, a limit's before and after.
 */
export type ResultReport = 'scale' | 'restart' | 'revoke' | 'fail' | 'limit';

/**
 * Every verb's descriptor: the one place a verb's facts are written. The registry (which verbs
 * exist, in help's order, which are the read path), the guards (policy or fixed requirement), help
 * (its line, which answers the channel sees), the timeline (which commands were looks) and the
 * approval messages (the confirm dialog, the progress word, the outcome line) read these and
 * keep no list of their own. A verb's module spreads its entry into its `CommandDefinition`, so
 * the two cannot disagree; the module itself (parsing, preview, reply, the approved action) is
 * imported only when the verb runs (`src/commands/registry.ts`). Data, help lines and result
 * wording only (the wording in `src/verbs/`, from the stored result and the catalog): this file
 * sits just above the config, so every layer that needs a verb's facts reads them here.
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
   * The policy (`policies.<name>`) that guards it and that its approved requests run under: the
   * guards ask for the policy's role (and 2FA for an admin one) before the command runs, and the
   * approvals service knows its executor by this name before the module is loaded.
   */
  readonly policy?: ActionName;
  /** A fixed requirement instead of a policy: the weakest role that may run it, never an approval. */
  readonly requires?: Role;
  /**
   * Who sees its answer in Slack: `shared` answers (the state of the queues, the open alerts) are
   * posted in the channel, so everyone in the incident looks at the same picture; `own` answers
   * only the asker needs are ephemeral. `help`'s footer lists both from here.
   */
  readonly answer?: 'shared' | 'own';
  /**
   * How its `command.<verb>` audit entry reads in the incident timeline: `look` (someone looked at
   * something), `alert.handled` (an alert acknowledged or snoozed); otherwise it is not shown.
   */
  readonly timeline?: 'look' | 'alert.handled';
  /** Its approval's Approve button asks to confirm, with the preview: it cannot simply be taken back. */
  readonly destructive?: boolean;
  /** The word before its progress line while it runs (`Purging… 340 of 1,000`). */
  readonly progress?: (locale: Locale) => string;
  /** Answered by every setup, the bot's store or not (the read path); the rest need the store. */
  readonly readPath?: true;
  /** One of the few mutating verbs the App Home tab (no channel) may send: its Approve and Deny. */
  readonly fromHome?: true;
  /**
   * The line its done request's message shows, from the stored result (`src/verbs/`);
   * without one, or when it answers undefined, its `report`'s wording, or none.
   */
  readonly outcome?: OutcomeWording;
  /** Its `action.done` in the incident timeline; without one, its `report`'s line, or the result field by field. */
  readonly timelineOutcome?: TimelineWording;
  /** Its result is a report the blocks word in full (the request message; the timeline's fallback). */
  readonly report?: ResultReport;
}

export const VERBS = {
  status: { verb: 'status', mutating: false, answer: 'shared', timeline: 'look', readPath: true },
  dlq: { verb: 'dlq', mutating: false, answer: 'shared', timeline: 'look', readPath: true },
  workers: { verb: 'workers', mutating: false, answer: 'shared', timeline: 'look', readPath: true },
  redis: {
    verb: 'redis',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
    readPath: true,
    describe: (locale) => ({ usage: messages(locale).redis.usage, summary: messages(locale).redis.summary }),
  },
  results: {
    verb: 'results',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
    readPath: true,
    describe: (locale) => ({
      usage: messages(locale).results.usage,
      summary: messages(locale).results.summary,
    }),
  },
  job: {
    verb: 'job',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
    readPath: true,
    describe: (locale) => ({ usage: messages(locale).job.usage, summary: messages(locale).job.summary }),
  },
  pause: {
    verb: 'pause',
    mutating: true,
    describe: (locale) => messages(locale).actions.pause,
    policy: 'pause',
    destructive: true,
    outcome: pauseOutcome,
    timelineOutcome: pauseTimeline,
  },
  resume: {
    verb: 'resume',
    mutating: true,
    describe: (locale) => messages(locale).actions.resume,
    policy: 'resume',
    outcome: resumeOutcome,
    timelineOutcome: resumeTimeline,
  },
  retry: {
    verb: 'retry',
    mutating: true,
    describe: (locale) => messages(locale).actions.retry,
    policy: 'retry',
    outcome: retryOutcome,
    timelineOutcome: retryTimeline,
  },
  purge: {
    verb: 'purge',
    mutating: true,
    describe: (locale) => messages(locale).purge.purge,
    policy: 'purge',
    destructive: true,
    progress: (locale) => messages(locale).purge.purgingVerb,
    outcome: purgeOutcome,
    timelineOutcome: purgeTimeline,
  },
  undo: {
    verb: 'undo',
    mutating: true,
    describe: (locale) => messages(locale).purge.undo,
    policy: 'undo',
    destructive: true,
    progress: (locale) => messages(locale).purge.restoringVerb,
    outcome: undoOutcome,
    timelineOutcome: undoTimeline,
  },
  pending: {
    verb: 'pending',
    mutating: false,
    answer: 'own',
    timeline: 'look',
    describe: (locale) => messages(locale).actions.pending,
  },
  // It runs the action: like the action itself, only in `slack.allowedChannels`.
  // The approvals service checks the approver against the request's policy when the click lands;
  // both are the only mutating verbs the App Home tab may send.
  approve: {
    verb: 'approve',
    mutating: true,
    fromHome: true,
    describe: (locale) => messages(locale).actions.approve,
  },
  deny: { verb: 'deny', mutating: true, fromHome: true, describe: (locale) => messages(locale).actions.deny },
  audit: {
    verb: 'audit',
    mutating: false,
    answer: 'own',
    describe: (locale) => messages(locale).actions.audit,
  },
  alerts: {
    verb: 'alerts',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
    describe: (locale) => messages(locale).escalation.alerts,
  },
  // Answering an alert storm must not stop at the eleventh alert.
  ack: {
    verb: 'ack',
    mutating: true,
    rateLimited: false,
    requires: 'operator',
    timeline: 'alert.handled',
    describe: (locale) => messages(locale).escalation.ack,
  },
  snooze: {
    verb: 'snooze',
    mutating: true,
    rateLimited: false,
    requires: 'operator',
    timeline: 'alert.handled',
    describe: (locale) => messages(locale).escalation.snooze,
  },
  // Pages a person now: an operator's call, at once, like `ack` (no `policies.page`).
  page: {
    verb: 'page',
    mutating: true,
    requires: 'operator',
    timeline: 'alert.handled',
    describe: (locale) => messages(locale).escalation.page,
  },
  silence: {
    verb: 'silence',
    mutating: true,
    requires: 'operator',
    timeline: 'alert.handled',
    describe: (locale) => messages(locale).escalation.silence,
  },
  silences: {
    verb: 'silences',
    mutating: false,
    describe: (locale) => messages(locale).escalation.silences,
  },
  unsilence: {
    verb: 'unsilence',
    mutating: true,
    requires: 'operator',
    timeline: 'alert.handled',
    describe: (locale) => messages(locale).escalation.unsilence,
  },
  scale: {
    verb: 'scale',
    mutating: true,
    destructive: true,
    describe: (locale) => ({
      usage: messages(locale).scale.usage.scale,
      summary: messages(locale).scale.summary.scale,
    }),
    policy: 'scale',
    timelineOutcome: scaleTimeline,
    report: 'scale',
  },
  restart: {
    verb: 'restart',
    mutating: true,
    destructive: true,
    describe: (locale) => ({
      usage: messages(locale).restart.usage,
      summary: messages(locale).restart.summary,
    }),
    policy: 'restart',
    timelineOutcome: restartTimeline,
    report: 'restart',
  },
  stuck: {
    verb: 'stuck',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
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
    timelineOutcome: revokeTimeline,
    report: 'revoke',
  },
  fail: {
    verb: 'fail',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).scale.usage.fail,
      summary: messages(locale).scale.summary.fail,
    }),
    policy: 'fail',
    timelineOutcome: failTimeline,
    report: 'fail',
  },
  'expire-results': {
    verb: 'expire-results',
    mutating: true,
    describe: (locale) => messages(locale).results.expire,
    policy: 'expire-results',
    progress: (locale) => messages(locale).purge.expiringVerb,
    outcome: expireResultsOutcome,
    timelineOutcome: expireResultsTimeline,
  },
  'rate-limit': {
    verb: 'rate-limit',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).limits.usage.rateLimit,
      summary: messages(locale).limits.summary.rateLimit,
    }),
    policy: 'rate-limit',
    report: 'limit',
  },
  concurrency: {
    verb: 'concurrency',
    mutating: true,
    describe: (locale) => ({
      usage: messages(locale).limits.usage.concurrency,
      summary: messages(locale).limits.summary.concurrency,
    }),
    policy: 'concurrency',
    report: 'limit',
  },
  timeline: {
    verb: 'timeline',
    mutating: false,
    answer: 'own',
    timeline: 'look',
    describe: (locale) => messages(locale).timeline.describe,
  },
  trend: {
    verb: 'trend',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
    describe: (locale) => messages(locale).trend.describe,
  },
  why: {
    verb: 'why',
    mutating: false,
    answer: 'shared',
    timeline: 'look',
    describe: (locale) => ({ usage: messages(locale).why.usage, summary: messages(locale).why.summary }),
  },
  // Built by the registry over every other verb (`createHelpCommand`), not loaded.
  help: { verb: 'help', mutating: false, answer: 'own' },
} as const satisfies Record<string, VerbFacts>;

/** A verb the registry knows. */
export type VerbName = keyof typeof VERBS;

/** Every descriptor, in the order help lists them (the read path first). */
export const VERB_LIST: readonly VerbFacts[] = Object.values(VERBS);

/** The facts of a verb as typed (any case), or undefined for a word that is no verb. */
export function factsOf(verb: string): VerbFacts | undefined {
  const key = verb.toLowerCase();
  return Object.hasOwn(VERBS, key) ? (VERBS as Record<string, VerbFacts>)[key] : undefined;
}

/** The verb whose approved requests run under `policies.<action>` (a stored request's `action`). */
export function factsOfAction(action: string): VerbFacts | undefined {
  return VERB_LIST.find((facts) => facts.policy === action);
}

/** The verbs with a fact set, in help's order: `verbsWhere((v) => v.answer === 'shared')`. */
export function verbsWhere(test: (facts: VerbFacts) => boolean): string[] {
  return VERB_LIST.filter(test).map((facts) => facts.verb);
}

/** Who sees a read's answer in Slack, from its descriptor: a shared answer the channel, any other the asker. */
export function answerVisibility(facts: VerbFacts): 'in_channel' | 'ephemeral' {
  return facts.answer === 'shared' ? 'in_channel' : 'ephemeral';
}
