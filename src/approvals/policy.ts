import type { ActionName, Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import type { ActionRequest } from '../store/store.js';
import type { Caller } from './execution.js';
import { type CliUsers, cliIdentity, crossTransportRefusal, type Party, partiesOf } from './identity.js';

/** Role checks, asked at the moment each step runs (never remembered from an earlier step). */
export interface Authority {
  has(userId: string, role: Role): Promise<boolean>;
  /** true / false / undefined = Slack did not say. */
  has2fa(userId: string): Promise<boolean | undefined>;
  /**
   * Whether the user may answer, from the App Home tab, what was asked in `channel`: `public` for
   * a public channel (anyone may join it), `member` or `not-member` for a private one, or what
   * Slack answered instead (`channel_not_found`…), which refuses. Absent: no Slack to ask.
   * `fresh` asks Slack now rather than trusting what it said minutes ago.
   */
  channelMembership?(
    userId: string,
    channel: string,
    options?: { fresh?: boolean },
  ): Promise<ChannelMembership>;
}

/** What {@link Authority.channelMembership} found. */
export type ChannelMembership = 'public' | 'member' | 'not-member' | { unknown: string };

/** What the policy reads: the config's policies, approvals and command-line users, and Slack's word on people. */
export interface PolicyDeps {
  authority: Authority;
  config: Pick<Config, 'policies' | 'approvals'> & { cli?: { users: CliUsers } };
  locale?: Locale;
}

/**
 * The approvals' policy: which role an action needs, whether a person holds it (and 2FA where
 * required), whether two parties may count as two people across transports, and what the audit
 * keeps of a command-line caller. Asked at the moment each step runs, never remembered.
 */
export function createApprovalPolicy(deps: PolicyDeps) {
  // Stored with the request, which has no locale of its own: written in the config's locale and
  // shown as stored.
  const t = messages(deps.locale ?? 'en').approvals;
  const cliUsers = deps.config.cli?.users ?? {};

  const policyFor = (action: string) => {
    const policy = deps.config.policies[action as ActionName];
    if (!policy) throw new OpsError(ErrorCode.BadArgument, { message: t.noPolicy(action) });
    return policy;
  };

  /**
   * `--user` is a claim: the audit keeps the OS account and host that typed the command too, and
   * whether `cli.users` binds that account to the id (`identity: bound`) or not (`claimed`).
   */
  function originOf(actor: Caller): Record<string, string> {
    if (actor.via !== 'cli' || actor.osUser === undefined) return {};
    return {
      origin: t.viaCommandLine(actor.osUser),
      osUser: actor.osUser,
      ...(actor.host !== undefined ? { host: actor.host } : {}),
      identity: cliIdentity(cliUsers, actor.osUser, actor.id),
    };
  }

  const partyOf = (actor: Caller): Party => ({
    id: actor.id,
    via: actor.via,
    ...(actor.via === 'cli' && actor.osUser !== undefined ? { osUser: actor.osUser, host: actor.host } : {}),
  });

  /** The refusal of `actor` counting against `others` across transports, as the error to throw. */
  function crossError(requestId: string, actor: Party, others: readonly Party[]): OpsError | undefined {
    const refusal = crossTransportRefusal(cliUsers, actor, others);
    if (!refusal) return undefined;
    if (refusal.kind === 'same-person') return new OpsError(ErrorCode.SelfApproval, { id: requestId });
    const cli = refusal.kind === 'cli-party' ? refusal.party : actor;
    return new OpsError(ErrorCode.IdentityNotBound, {
      kind: refusal.kind,
      id: requestId,
      osUser: cli.osUser ?? '?',
      user: cli.id,
      ...(refusal.kind === 'claimed-vs-bound' ? { bound: [refusal.party.osUser ?? '?'] } : {}),
    });
  }

  async function checkRole(actor: Pick<Caller, 'id'>, role: Role, action: string): Promise<void> {
    if (!(await deps.authority.has(actor.id, role))) {
      throw new OpsError(ErrorCode.Forbidden, { role, action });
    }
    if (deps.config.approvals.require2fa && role === 'admin') {
      const has2fa = await deps.authority.has2fa(actor.id);
      if (has2fa !== true)
        throw new OpsError(ErrorCode.TwoFactorRequired, {
          action,
          status: has2fa === false ? 'off' : 'unknown',
        });
    }
  }

  /**
   * Why the action may not run now, in words, or undefined: the requester and every stored approver
   * are checked again (role, and 2FA where required). An approver removed from the role since they
   * approved no longer counts, and the approvals were exactly enough, so it does not run.
   */
  async function refusalAtExecution(request: ActionRequest, role: Role): Promise<string | undefined> {
    const people = [
      { id: request.requestedBy, name: request.requestedByName, requester: true },
      ...request.approvals.map((a) => ({ id: a.userId, name: a.userName, requester: false })),
    ];
    for (const person of people) {
      try {
        await checkRole(person, role, request.action);
      } catch (error) {
        const who = person.name ?? person.id;
        const no2fa = error instanceof OpsError && error.code === ErrorCode.TwoFactorRequired;
        if (person.requester) return no2fa ? t.requesterNo2fa(who) : t.requesterLostRole(who, role);
        return no2fa ? t.approverNo2fa(who) : t.approverLostRole(who, role);
      }
    }
    // Each approval against everyone before it, as when it was given: two approvals racing from
    // Slack and the command line are checked together here, however the store ordered them.
    const parties = partiesOf(request);
    for (let i = 1; i < parties.length; i++) {
      const error = crossError(request.id, parties[i]!, parties.slice(0, i));
      if (error) return messages(deps.locale ?? 'en').errors.describe(error);
    }
    return undefined;
  }

  return { policyFor, originOf, partyOf, crossError, checkRole, refusalAtExecution };
}

/** What {@link createApprovalPolicy} answers with: the checks each step of a request asks. */
export type ApprovalPolicy = ReturnType<typeof createApprovalPolicy>;
