import type { Config, Role } from '../config/schema.js';
import type { SlackDirectory } from './slack-directory.js';

/** Strongest first: admin ⊃ operator ⊃ viewer. */
export const ROLES_STRONGEST_FIRST: readonly Role[] = ['admin', 'operator', 'viewer'];

const rank: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

/** True when `held` includes `needed` (admin ⊃ operator ⊃ viewer). */
export function roleIncludes(held: Role | undefined, needed: Role): boolean {
  return held !== undefined && rank[held] >= rank[needed];
}

/** A Slack user id (`U…`, or `W…` on Enterprise Grid). Anything else, e.g. `cli:alice`, is not. */
export function isSlackUserId(id: string): boolean {
  return /^[UW][A-Z0-9]+$/.test(id);
}

export interface RoleResolverOptions {
  roles: Config['roles'];
  directory: SlackDirectory;
  /** Milliseconds since the epoch; injected so the cache can be tested without waiting. */
  now: () => number;
  /** How long a user group's members are trusted. At most 5 minutes: someone removed from a group loses its rights within that. */
  cacheTtlMs?: number;
  /**
   * How long a failed group lookup is remembered. Short: long enough that a burst of commands
   * does not hammer a Tier 2 method that is already failing, short enough that recovery shows.
   */
  failureTtlMs?: number;
  /** Told about each failed group lookup (for the log); the lookup itself grants nothing. */
  onLookupError?: (groupId: string, error: unknown) => void;
}

export interface RoleResolution {
  /** The strongest role held, or undefined when none. */
  role: Role | undefined;
  /** Group ids that could have granted a stronger role but could not be resolved. */
  unresolvedGroups: string[];
}

/**
 * Who holds which role, from `roles:` in the config. Entries are Slack user ids (`U…`/`W…`),
 * user-group ids (`S…`, members from `usergroups.users.list`, cached for at most `cacheTtlMs`)
 * or `"*"` (everyone). A group that cannot be resolved grants nothing.
 *
 * An actor id that is not a Slack user id, such as `cli:<os user>` on the command line without
 * `--user`, matches only `"*"` entries.
 */
export interface RoleResolver {
  /** The strongest role the user holds now, or undefined. */
  roleOf(userId: string): Promise<Role | undefined>;
  /** Whether the user holds `role` or a stronger one now. Stops at the first entry that grants it. */
  has(userId: string, role: Role): Promise<boolean>;
  /** Like `roleOf`, also naming groups whose lookup failed (for denial reasons in the audit). */
  resolve(userId: string): Promise<RoleResolution>;
}

interface CacheEntry {
  expiresAt: number;
  members?: ReadonlySet<string>;
  error?: unknown;
}

export function createRoleResolver(options: RoleResolverOptions): RoleResolver {
  const { roles, directory, now, onLookupError } = options;
  const cacheTtlMs = Math.min(options.cacheTtlMs ?? 5 * 60_000, 5 * 60_000);
  const failureTtlMs = Math.min(options.failureTtlMs ?? 10_000, cacheTtlMs);
  const cache = new Map<string, CacheEntry>();
  // One HTTP call per group however many commands arrive at once: usergroups.users.list is Tier 2.
  const inFlight = new Map<string, Promise<CacheEntry>>();

  const groupEntry = async (groupId: string): Promise<CacheEntry> => {
    const cached = cache.get(groupId);
    if (cached && now() <= cached.expiresAt) return cached;
    const pending = inFlight.get(groupId);
    if (pending) return pending;
    const lookup = (async (): Promise<CacheEntry> => {
      try {
        const members = new Set(await directory.usergroupMembers(groupId));
        const entry = { members, expiresAt: now() + cacheTtlMs };
        cache.set(groupId, entry);
        return entry;
      } catch (error) {
        onLookupError?.(groupId, error);
        const entry = { error, expiresAt: now() + failureTtlMs };
        cache.set(groupId, entry);
        return entry;
      } finally {
        inFlight.delete(groupId);
      }
    })();
    inFlight.set(groupId, lookup);
    return lookup;
  };

  const directlyListed = (userId: string, role: Role): boolean =>
    roles[role].some((entry) => entry === '*' || (isSlackUserId(userId) && entry === userId));

  const groupsOf = (userId: string, role: Role): string[] =>
    isSlackUserId(userId) ? roles[role].filter((entry) => entry.startsWith('S')) : [];

  /** Whether any group listed under `role` contains the user; failed groups are collected. */
  const inGroups = async (userId: string, role: Role, unresolved: string[]): Promise<boolean> => {
    const entries = await Promise.all(
      groupsOf(userId, role).map(async (g) => [g, await groupEntry(g)] as const),
    );
    let found = false;
    for (const [groupId, entry] of entries) {
      if (entry.members?.has(userId)) found = true;
      else if (!entry.members) unresolved.push(groupId);
    }
    return found;
  };

  const resolve = async (userId: string): Promise<RoleResolution> => {
    const unresolvedGroups: string[] = [];
    for (const role of ROLES_STRONGEST_FIRST) {
      if (directlyListed(userId, role) || (await inGroups(userId, role, unresolvedGroups))) {
        return { role, unresolvedGroups };
      }
    }
    return { role: undefined, unresolvedGroups };
  };

  return {
    resolve,
    async roleOf(userId) {
      return (await resolve(userId)).role;
    },
    async has(userId, role) {
      const sufficient = ROLES_STRONGEST_FIRST.filter((r) => roleIncludes(r, role));
      // Cheap entries first: a user listed by id or a "*" never costs a Slack call.
      if (sufficient.some((r) => directlyListed(userId, r))) return true;
      for (const r of sufficient) {
        if (await inGroups(userId, r, [])) return true;
      }
      return false;
    },
  };
}
