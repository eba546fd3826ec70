import type { ActionName, Role } from '../config/schema.js';
import type { Locale } from '../i18n/index.js';
import type { OutcomeWording, TimelineWording } from './wording.js';

/**
 * The report an approved action's result is, for the verbs whose result the blocks word in full
 * (`src/blocks/scale.ts`): a worker group's changes, a restart's come-back, a revoke's answers, a
 * job failed by hand, a limit's before and after.
 */
export type ResultReport = 'scale' | 'restart' | 'revoke' | 'fail' | 'limit';

/**
 * Every verb's descriptor: the one place a verb's facts are written, beside its command (an
 * exported `<verb>Facts = { … } satisfies VerbFacts` of `src/commands/<file>.ts`, which the
 * command spreads into its `CommandDefinition`), copied by scripts/gen-verbs.js into
 * `src/verbs.generated.ts`. The registry (which verbs exist, in help's order, which are the read
 * path), the guards (policy or fixed requirement), help (its line, which answers the channel
 * sees), the timeline (which commands were looks) and the approval messages (the confirm dialog,
 * the progress word, the outcome line) read that copy through `src/verbs.ts` and keep no list of
 * their own; the command module itself (parsing, preview, reply, the approved action) is imported
 * only when the verb runs (`src/commands/registry.ts`). Data, help lines and result wording only
 * (the wording in `src/verbs/`, from the stored result and the catalog): the generated copy sits
 * just above the config, so a descriptor may use only what that layer may import.
 */
export interface VerbFacts {
  readonly verb: string;
  /**
   * Its place in `/queue help` (and in every list derived from the descriptors), smallest first:
   * the read path, then the actions, approvals, the audit, alerts and the incident views, `help`
   * last. scripts/gen-verbs.js sorts the descriptors by it; two verbs never share a number.
   */
  readonly order: number;
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
