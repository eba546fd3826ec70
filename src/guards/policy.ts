import type { ActionName, Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { Via } from '../store/store.js';
import { roleIncludes } from './roles.js';

/** The verbs whose permission comes from `policies:` in the config. */
export const POLICY_ACTIONS: readonly ActionName[] = [
  'pause',
  'resume',
  'retry',
  'scale',
  'restart',
  'purge',
  'revoke',
  'fail',
  'undo',
];

export function isPolicyAction(verb: string): verb is ActionName {
  return (POLICY_ACTIONS as readonly string[]).includes(verb);
}

/**
 * Verbs with a fixed requirement and no `policies:` entry: acknowledging or snoozing an alert
 * silences reminders for everyone, so it takes an operator; never an approval.
 */
const FIXED_REQUIREMENTS: Readonly<Record<string, { role: Role; approvals: number }>> = {
  ack: { role: 'operator', approvals: 0 },
  snooze: { role: 'operator', approvals: 0 },
  silence: { role: 'operator', approvals: 0 },
  unsilence: { role: 'operator', approvals: 0 },
  // Paging wakes a person: an operator's call, at once.
  page: { role: 'operator', approvals: 0 },
};

export interface Requirement {
  /** The weakest role that may run it. */
  role: Role;
  /** Other people who must approve before it runs (0: runs at once). */
  approvals: number;
}

/**
 * What running `action` takes. A policy action takes what its policy says; anything else needs
 * `viewer`. A mutating verb without a policy (`approve`, `deny`) also passes with `viewer` here:
 * the approvals service checks the approver against the request's policy when the click lands.
 */
export function requirementFor(action: string, policies: Config['policies']): Requirement {
  if (isPolicyAction(action)) {
    const policy = policies[action];
    return { role: policy.role, approvals: policy.approvals };
  }
  if (Object.hasOwn(FIXED_REQUIREMENTS, action)) return FIXED_REQUIREMENTS[action]!;
  return { role: 'viewer', approvals: 0 };
}

/** Whether `decide` would look at 2FA for this action, so callers only ask Slack when it matters. */
export function needsTwoFactor(action: string, policies: Config['policies'], approvals: Config['approvals']) {
  return approvals.require2fa && requirementFor(action, policies).role === 'admin';
}

/** The only mutating verbs the App Home tab may send (its Approve and Deny buttons). */
export const HOME_VERBS: ReadonlySet<string> = new Set(['approve', 'deny']);

export interface DecideInput {
  /** The command verb; the policy name for `pause`, `resume`, `retry`, `scale`, `purge`. */
  action: string;
  policies: Config['policies'];
  approvals: Config['approvals'];
  /** From the command's definition: does it change anything? */
  mutating: boolean;
  /** Where it was typed or clicked; undefined on the command line. */
  channel: string | undefined;
  allowedChannels: readonly string[];
  via: Via;
  /** `home`: clicked on the App Home tab (no channel); see `HOME_VERBS`. */
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
  const homeAnswer = via === 'slack' && input.surface === 'home' && HOME_VERBS.has(action);
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
  const needed = requirementFor(action, input.policies);
  if (!roleIncludes(input.role, needed.role)) {
    return { allow: false, error: new OpsError(ErrorCode.Forbidden, { role: needed.role, action }) };
  }
  if (needsTwoFactor(action, input.policies, input.approvals) && input.has2fa !== true) {
    const status = input.has2fa === false ? 'off' : 'unknown';
    return { allow: false, error: new OpsError(ErrorCode.TwoFactorRequired, { action, status }) };
  }
  return { allow: true, approvalsNeeded: mutating ? needed.approvals : 0 };
}
