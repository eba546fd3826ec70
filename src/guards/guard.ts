import { boundElsewhere, boundToOthers, type CliUsers } from '../approvals/identity.js';
import type { Authority } from '../approvals/service.js';
import type { Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { Via } from '../store/store.js';
import type { ChannelMembershipCheck } from './channel-members.js';
import { type Decision, decide, needsTwoFactor, requirementFor, type VerbFactsOf } from './policy.js';
import { isSlackUserId, type RoleResolver, roleIncludes } from './roles.js';
import type { SlackDirectory } from './slack-directory.js';

/** What the guards read from the config. */
export type GuardConfig = Pick<Config, 'policies' | 'approvals' | 'slack'> & { cli?: { users: CliUsers } };

export interface GuardDeps {
  roles: RoleResolver;
  directory: SlackDirectory;
  config: GuardConfig;
  /** Each verb's facts (`factsOf` of src/verbs.ts), passed in by the composition root. */
  verbs: VerbFactsOf;
}

/** One command about to run, whatever transport it came through. */
export interface GuardInput {
  actorId: string;
  via: Via;
  /** Slack channel; undefined on the command line and in the demo console. */
  channel?: string;
  /** The command verb. */
  verb: string;
  mutating: boolean;
  /** `home`: clicked on the App Home tab. */
  surface?: 'home';
  /** On the command line: the OS account that typed it (`cli.users` may bind it to ids). */
  osUser?: string;
}

/** A decision plus what went into it, so a denial can say why and the audit can record it. */
export type GuardVerdict = Decision & {
  /** The actor's strongest role at the moment of the check. */
  role: Role | undefined;
  /** User groups that could not be resolved with Slack (they granted nothing). */
  unresolvedGroups: string[];
};

/** The guards as plain functions, which the dispatcher's guard middleware calls. */
export interface Guard {
  /** Channel, role and 2FA for one command. Never throws: a failed Slack lookup is a denial. */
  check(input: GuardInput): Promise<GuardVerdict>;
}

/**
 * The approvals service's `Authority` over the role resolver and Slack; `has2fa` turns a failed
 * lookup into "unknown" (which denies).
 */
export function createAuthority(
  deps: Pick<GuardDeps, 'roles' | 'directory'> & { channelMembership?: ChannelMembershipCheck },
): Authority {
  return {
    ...(deps.channelMembership ? { channelMembership: deps.channelMembership } : {}),
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

/** Why a command-line actor may not use the id it gave, or undefined. */
function cliIdentityRefusal(users: CliUsers, input: GuardInput): OpsError | undefined {
  const bound = boundElsewhere(users, input.osUser, input.actorId);
  if (bound) {
    return new OpsError(ErrorCode.IdentityNotBound, {
      kind: 'mismatch',
      osUser: input.osUser,
      user: input.actorId,
      bound,
    });
  }
  const owners = boundToOthers(users, input.osUser, input.actorId);
  if (owners) {
    return new OpsError(ErrorCode.IdentityNotBound, {
      kind: 'taken',
      osUser: input.osUser ?? '?',
      user: input.actorId,
      bound: owners,
    });
  }
  return undefined;
}

export function createGuard(deps: GuardDeps): Guard {
  const { roles, config, verbs } = deps;
  const authority = createAuthority(deps);

  return {
    async check(input) {
      const { role, unresolvedGroups } = await roles.resolve(input.actorId);
      // An OS account bound in `cli.users` is those ids and no other: `--user` with another id is
      // someone pretending, whatever the command. And an id bound to an account is that account's
      // alone: another account typing `--user` with it is pretending too.
      const refusal = input.via === 'cli' ? cliIdentityRefusal(config.cli?.users ?? {}, input) : undefined;
      if (refusal) return { allow: false, error: refusal, role, unresolvedGroups };
      // users.info is only asked when its answer can change the decision.
      const askSlack =
        needsTwoFactor(input.verb, config.policies, config.approvals, verbs) &&
        roleIncludes(role, requirementFor(input.verb, config.policies, verbs).role);
      const has2fa = askSlack ? await authority.has2fa(input.actorId) : undefined;
      const decision = decide({
        action: input.verb,
        verbs,
        policies: config.policies,
        approvals: config.approvals,
        mutating: input.mutating,
        channel: input.channel,
        allowedChannels: config.slack.allowedChannels,
        via: input.via,
        ...(input.surface ? { surface: input.surface } : {}),
        role,
        has2fa,
      });
      return { ...decision, role, unresolvedGroups };
    },
  };
}
