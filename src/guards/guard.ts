import type { Via } from '../commands/types.js';
import type { Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Decision, decide, needsTwoFactor, requirementFor } from './policy.js';
import { isSlackUserId, type RoleResolver, roleIncludes } from './roles.js';
import type { SlackDirectory } from './slack-directory.js';

/** What the guards read from the config. */
export type GuardConfig = Pick<Config, 'policies' | 'approvals' | 'slack'>;

export interface GuardDeps {
  roles: RoleResolver;
  directory: SlackDirectory;
  config: GuardConfig;
}

/** One command about to run, whatever transport it came through. */
export interface GuardInput {
  actorId: string;
  via: Via;
  /** Slack channel; undefined on the command line and in the demo console. */
  channel?: string;
  /** The command verb (the policy name for `pause`, `resume`, `retry`, `scale`, `purge`). */
  verb: string;
  mutating: boolean;
}

/** A decision plus what went into it, so a denial can say why and the audit can record it. */
export type GuardVerdict = Decision & {
  /** The actor's strongest role at the moment of the check. */
  role: Role | undefined;
  /** User groups that could not be resolved with Slack (they granted nothing). */
  unresolvedGroups: string[];
};

/**
 * Role checks for the approvals service, asked at the moment each step runs. Structurally the
 * `Authority` that `createApprovals` takes.
 */
export interface Authority {
  has(userId: string, role: Role): Promise<boolean>;
  /** true / false / undefined = Slack did not say (or could not be asked). */
  has2fa(userId: string): Promise<boolean | undefined>;
}

/**
 * The guards as plain functions: the dispatcher middleware, the Bolt middleware and the
 * approvals service all call these, so the CLI and Slack go through the same checks.
 */
export interface Guard {
  /** Channel, role and 2FA for one command. Never throws: a failed Slack lookup is a denial. */
  check(input: GuardInput): Promise<GuardVerdict>;
  /** `Forbidden { role, action }` unless the actor holds `role` now; undefined when allowed. */
  checkRole(actorId: string, role: Role, action: string): Promise<OpsError | undefined>;
  /**
   * `TwoFactorRequired` when `approvals.require2fa` is on, `role` is `admin` and Slack does not
   * confirm 2FA for the actor; undefined when allowed.
   */
  checkTwoFactor(actorId: string, role: Role, action: string): Promise<OpsError | undefined>;
  /** Role and 2FA as `policies.<action>` demands them, e.g. for an approver at the moment of approving. */
  checkPolicy(actorId: string, action: string): Promise<OpsError | undefined>;
}

/** `has2fa` for a directory, turning a failed lookup into "unknown" (which denies). */
export function createAuthority(deps: Pick<GuardDeps, 'roles' | 'directory'>): Authority {
  return {
    has: (userId, role) => deps.roles.has(userId, role),
    has2fa: async (userId) => {
      // Only a Slack user can have 2FA; `cli:alice` is never asked about.
      if (!isSlackUserId(userId)) return undefined;
      try {
        return await deps.directory.userHas2fa(userId);
      } catch {
        return undefined;
      }
    },
  };
}

export function createGuard(deps: GuardDeps): Guard {
  const { roles, config } = deps;
  const authority = createAuthority(deps);

  const twoFactorError = async (actorId: string, action: string): Promise<OpsError | undefined> => {
    const has2fa = await authority.has2fa(actorId);
    if (has2fa === true) return undefined;
    return new OpsError(ErrorCode.TwoFactorRequired, {
      action,
      status: has2fa === false ? 'off' : 'unknown',
    });
  };

  const checkRole: Guard['checkRole'] = async (actorId, role, action) =>
    (await roles.has(actorId, role)) ? undefined : new OpsError(ErrorCode.Forbidden, { role, action });

  const checkTwoFactor: Guard['checkTwoFactor'] = async (actorId, role, action) =>
    config.approvals.require2fa && role === 'admin' ? twoFactorError(actorId, action) : undefined;

  return {
    checkRole,
    checkTwoFactor,
    async checkPolicy(actorId, action) {
      const { role } = requirementFor(action, config.policies);
      return (await checkRole(actorId, role, action)) ?? (await checkTwoFactor(actorId, role, action));
    },
    async check(input) {
      const { role, unresolvedGroups } = await roles.resolve(input.actorId);
      // users.info is only asked when its answer can change the decision.
      const askSlack =
        needsTwoFactor(input.verb, config.policies, config.approvals) &&
        roleIncludes(role, requirementFor(input.verb, config.policies).role);
      const has2fa = askSlack ? await authority.has2fa(input.actorId) : undefined;
      const decision = decide({
        action: input.verb,
        policies: config.policies,
        approvals: config.approvals,
        mutating: input.mutating,
        channel: input.channel,
        allowedChannels: config.slack.allowedChannels,
        via: input.via,
        role,
        has2fa,
      });
      return { ...decision, role, unresolvedGroups };
    },
  };
}
