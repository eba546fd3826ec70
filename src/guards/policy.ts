import type { Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { Via } from '../store/store.js';
import type { VerbFacts } from '../verbs.js';
import { roleIncludes } from './roles.js';

/**
 * What the guards know of a verb, from its descriptor (`src/verbs.ts`), handed to them by the
 * composition root: the policy that guards it, or its fixed requirement, and whether the App Home
 * tab may send it. A word with no facts is no verb; the dispatcher answers it.
 */
export type GuardFacts = Pick<VerbFacts, 'policy' | 'requires' | 'fromHome'>;
export type VerbFactsOf = (verb: string) => GuardFacts | undefined;

export interface Requirement {
  /** The weakest role that may run it. */
  role: Role;
  /** Other people who must approve before it runs (0: runs at once). */
  approvals: number;
}

/**
 * What running `action` takes. A verb with a policy takes what its policy says; one with a fixed
 * requirement (`ack`, `silence`…: silencing reminders for everyone takes an operator) takes that
 * role and never an approval; anything else needs `viewer`. A mutating verb without either
 * (`approve`, `deny`) also passes with `viewer` here: the approvals service checks the approver
 * against the request's policy when the click lands.
 */
export function requirementFor(
  action: string,
  policies: Config['policies'],
  verbs: VerbFactsOf,
): Requirement {
  const facts = verbs(action);
  if (facts?.policy) {
    const policy = policies[facts.policy];
    return { role: policy.role, approvals: policy.approvals };
  }
  if (facts?.requires) return { role: facts.requires, approvals: 0 };
  return { role: 'viewer', approvals: 0 };
}

/** Whether `decide` would look at 2FA for this action, so callers only ask Slack when it matters. */
export function needsTwoFactor(
  action: string,
  policies: Config['policies'],
  approvals: Config['approvals'],
  verbs: VerbFactsOf,
) {
  return approvals.require2fa && requirementFor(action, policies, verbs).role === 'admin';
}

export interface DecideInput {
  /** The command verb. */
  action: string;
  /** Each verb's facts (its policy or fixed requirement), from the composition root. */
  verbs: VerbFactsOf;
  policies: Config['policies'];
  approvals: Config['approvals'];
  /** From the command's definition: does it change anything? */
  mutating: boolean;
  /** Where it was typed or clicked; undefined on the command line. */
  channel: string | undefined;
  allowedChannels: readonly string[];
  via: Via;
  /** `home`: clicked on the App Home tab (no channel); only verbs whose facts say `fromHome`. */
  surface?: 'home';
  /** The actor's strongest role now. */
  role: Role | undefined;
  /** From `users.info`; only consulted for admin actions with `require2fa`. */
  has2fa: boolean | undefined;
}

export type Decision = { allow: true; approvalsNeeded: number } | { allow: false; error: OpsError };

/**
 * The whole permission rule for one command, with no I/O:
 * 1. Channel: through Slack, a mutating command only runs in `slack.allowedChannels`; read-only
 *    commands run anywhere. The command line and the demo console have no channel and are not
 *    channel-restricted; they are role-checked like Slack.
 * 2. Role: the policy's role, or `viewer` for anything else.
 * 3. 2FA: with `approvals.require2fa`, an admin-role action needs `has2fa === true`; unknown is
 *    a denial (`TwoFactorRequired` with `status: 'unknown'`).
 */
export function decide(input: DecideInput): Decision {
  const { action, mutating, via, channel, allowedChannels } = input;
  // The Home tab has no channel; it only carries approve/deny, and the approvals service checks
  // the request's policy role before it reveals or changes anything (approvals/service.ts load).
  const homeAnswer = via === 'slack' && input.surface === 'home' && input.verbs(action)?.fromHome === true;
  if (
    mutating &&
    via === 'slack' &&
    !homeAnswer &&
    (channel === undefined || !allowedChannels.includes(channel))
  ) {
    return {
      allow: false,
      error: new OpsError(ErrorCode.WrongChannel, { action, channels: [...allowedChannels] }),
    };
  }
  const needed = requirementFor(action, input.policies, input.verbs);
  if (!roleIncludes(input.role, needed.role)) {
    return { allow: false, error: new OpsError(ErrorCode.Forbidden, { role: needed.role, action }) };
  }
  if (needsTwoFactor(action, input.policies, input.approvals, input.verbs) && input.has2fa !== true) {
    const status = input.has2fa === false ? 'off' : 'unknown';
    return { allow: false, error: new OpsError(ErrorCode.TwoFactorRequired, { action, status }) };
  }
  return { allow: true, approvalsNeeded: mutating ? needed.approvals : 0 };
}
