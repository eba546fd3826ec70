import type { ActionRequest, Actor, Via } from '../store/store.js';

/**
 * `cli.users`: OS account → the Slack user ids that account is. `--user` alone is only a claim
 * (anyone can type any id); a binding here is what makes a command-line identity count as the
 * Slack person it names.
 */
export type CliUsers = Readonly<Record<string, readonly string[]>>;

/** How a command-line identity stands: its OS account is bound to the id it uses, or not. */
export type CliIdentity = 'bound' | 'claimed';

/** One person taking part in a request: its requester or one of its approvers. */
export interface Party extends Pick<Actor, 'id' | 'osUser' | 'host'> {
  via: Via;
}

/** Whether `osUser` is bound to `id` in `cli.users`. */
export function cliIdentity(users: CliUsers, osUser: string | undefined, id: string): CliIdentity {
  return osUser !== undefined && Object.hasOwn(users, osUser) && users[osUser]!.includes(id)
    ? 'bound'
    : 'claimed';
}

/**
 * The ids `osUser` is bound to when it claims one outside them (`alice: [U0ALICE]` typing
 * `--user U0BOB`), else undefined. `cli:<account>`, the identity without `--user`, claims nothing.
 */
export function boundElsewhere(
  users: CliUsers,
  osUser: string | undefined,
  id: string,
): readonly string[] | undefined {
  if (osUser === undefined || !Object.hasOwn(users, osUser)) return undefined;
  const bound = users[osUser]!;
  if (bound.includes(id) || id === `cli:${osUser}`) return undefined;
  return bound;
}

/**
 * The OS accounts `cli.users` binds `id` to when `osUser` is not one of them, else undefined: an id
 * bound to one account is that account's alone, whoever else types `--user <id>`.
 */
export function boundToOthers(
  users: CliUsers,
  osUser: string | undefined,
  id: string,
): readonly string[] | undefined {
  const owners = Object.keys(users).filter((account) => users[account]!.includes(id));
  if (owners.length === 0 || (osUser !== undefined && owners.includes(osUser))) return undefined;
  return owners;
}

/** The requester and every approver of a request, as parties. */
export function partiesOf(request: ActionRequest): Party[] {
  return [
    {
      id: request.requestedBy,
      via: request.via,
      ...(request.requestedByOsUser !== undefined
        ? { osUser: request.requestedByOsUser, host: request.requestedOnHost }
        : {}),
    },
    ...request.approvals.map(
      (a): Party => ({
        id: a.userId,
        // Approvals stored before `via` was recorded: one with an OS account came from the command line.
        via: a.via ?? (a.osUser !== undefined ? 'cli' : 'slack'),
        ...(a.osUser !== undefined ? { osUser: a.osUser, host: a.host } : {}),
      }),
    ),
  ];
}

/** Why `actor` may not count against `other`, or undefined. */
export type CrossRefusal =
  /** A command-line actor not bound to its id, against a Slack party. */
  | { kind: 'cli-actor'; party: Party }
  /** A Slack actor against a command-line party not bound to its id. */
  | { kind: 'cli-party'; party: Party }
  /** The same person under two ids (a bound OS account and one of its Slack ids). */
  | { kind: 'same-person'; party: Party }
  /** A command-line actor not bound to its id, against a command-line party that is bound. */
  | { kind: 'claimed-vs-bound'; party: Party };

/**
 * The rule across transports: a command-line identity counts against a Slack identity only when
 * its OS account is bound to that id (`cli.users`). Two command-line parties are compared by the
 * store's OS-account rule instead (approvals.cliSameOsUser), as before; two Slack parties by id.
 * A bound OS account is every id it is bound to: `alice: [U0ALICE, U0ALT]` approving as U0ALT
 * what U0ALICE asked in Slack is one person. A claim (`--user` from an account `cli.users` does
 * not bind to it) never counts as the second person against a bound identity: a bound one is
 * somebody known, a claim could be that same somebody under another account.
 */
export function crossTransportRefusal(
  users: CliUsers,
  actor: Party,
  others: readonly Party[],
): CrossRefusal | undefined {
  const isCli = (p: Party) => p.via === 'cli';
  const isSlack = (p: Party) => p.via === 'slack';
  const identities = (p: Party): readonly string[] =>
    isCli(p) && cliIdentity(users, p.osUser, p.id) === 'bound' ? users[p.osUser!]! : [p.id];
  for (const party of others) {
    if (isCli(actor) && isSlack(party) && cliIdentity(users, actor.osUser, actor.id) !== 'bound')
      return { kind: 'cli-actor', party };
    if (isSlack(actor) && isCli(party) && cliIdentity(users, party.osUser, party.id) !== 'bound')
      return { kind: 'cli-party', party };
    if (
      isCli(actor) &&
      isCli(party) &&
      cliIdentity(users, actor.osUser, actor.id) !== 'bound' &&
      cliIdentity(users, party.osUser, party.id) === 'bound'
    )
      return { kind: 'claimed-vs-bound', party };
  }
  const mine = identities(actor);
  for (const party of others) {
    if (party.id === actor.id) continue; // the same id is the caller's own self-approval check
    if (identities(party).some((id) => mine.includes(id))) return { kind: 'same-person', party };
  }
  return undefined;
}
