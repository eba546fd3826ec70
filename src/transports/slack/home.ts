import type { App, webApi } from '@slack/bolt';
import type { Approvals } from '../../approvals/service.js';
import type { BackendRegistry } from '../../backends/registry.js';
import { type HomeInput, homeView } from '../../blocks/home.js';
import type { Config, Role } from '../../config/schema.js';
import { isOpsError } from '../../errors.js';
import type { AlertService } from '../../escalation/alerts.js';
import type { Alert } from '../../escalation/lifecycle.js';
import type { ChannelMembershipCheck } from '../../guards/channel-members.js';
import type { Locale } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import type { Silence } from '../../store/alert.js';
import type { ActionRequest, Store } from '../../store/store.js';
import { eventFromAudit } from '../../timeline/events.js';

type WebClient = webApi.WebClient;

/** At most one publish per user in this window (the issue's "at most once every 10 s"). */
export const HOME_MIN_INTERVAL_MS = 10_000;
/** People whose tab is kept fresh; the longest-unseen is forgotten first. */
export const HOME_MAX_USERS = 500;
/** Audit entries read to find one person's recent actions (newest first, bounded). */
const RECENT_SCAN = 300;

export interface HomeDeps {
  client: WebClient;
  config: Pick<Config, 'policies'>;
  backends: BackendRegistry;
  approvals: Pick<Approvals, 'pending'>;
  /** Open alerts, and the silences in force when the service has them. */
  alerts: Pick<AlertService, 'open'> & Partial<Pick<AlertService, 'silences'>>;
  store: Pick<Store, 'listAudit'>;
  roles: { has(userId: string, role: Role): Promise<boolean> };
  /**
   * Whether the user may answer what was asked in a channel (a private one: only its members).
   * Absent: every request the role allows is listed (the approvals service still checks a click).
   */
  channelMembership?: ChannelMembershipCheck;
  logger: Logger;
  locale?: Locale;
  /** The user's own language when their Slack locale is one we speak (as commands use it). */
  userLocale?: (userId: string) => Promise<Locale | undefined>;
  now?: () => Date;
  minIntervalMs?: number;
  maxUsers?: number;
}

/**
 * What a Home tab shows that another replica can change, in one string: the requests waiting
 * (and how many approvals each has) and the open alerts (each write bumps an alert's version).
 */
export function homeFingerprint(
  pending: readonly Pick<ActionRequest, 'id' | 'approvals'>[],
  alerts: readonly Pick<Alert, 'id' | 'version'>[],
  silences: readonly Pick<Silence, 'id'>[] = [],
): string {
  const requests = pending.map((r) => `${r.id}:${r.approvals.length}`).sort();
  const open = alerts.map((a) => `${a.id}:${a.version}`).sort();
  const quiet = silences.map((s) => s.id).sort();
  return `${requests.join(',')}|${open.join(',')}${quiet.length ? `|${quiet.join(',')}` : ''}`;
}

/** The App Home tab: published on open, refreshed on changes, throttled per user. */
export interface HomeTab {
  /** The user opened the tab: refresh it (throttled). */
  opened(userId: string): void;
  /** Requests or alerts changed: refresh every tab we keep fresh (throttled per user). */
  changed(): void;
  /** Answers a click on the tab by re-publishing it at once with `text` at the top. */
  notice(userId: string, text: string): Promise<void>;
  /**
   * Looks for changes made elsewhere (another replica approved a request, the monitor's lease
   * holder opened an alert): the tabs kept fresh here are refreshed when the waiting requests, open
   * alerts or silences differ from the last look. The bot's `home-watch` background job runs it
   * once a monitor interval; without it only this process's own changes refresh the tabs.
   */
  lookForChanges(): Promise<void>;
  /** Resolves when no publish is running (tests, shutdown). */
  idle(): Promise<void>;
  /** Cancels pending refreshes. */
  stop(): void;
}

interface UserState {
  last: number;
  timer?: NodeJS.Timeout;
  notice?: string;
}

/**
 * What one person's tab reads: every system's status, the requests waiting for them, and what they
 * did lately.
 */
function homeReads(deps: HomeDeps) {
  async function systems(): Promise<HomeInput['systems']> {
    return await Promise.all(
      deps.backends.names().map(async (name) => {
        try {
          // The coalesced status read: a tab opened during a scrape shares its round trip.
          return {
            name,
            status: await (
              deps.backends.get(name) as NonNullable<ReturnType<BackendRegistry['get']>>
            ).status(),
          };
        } catch (error) {
          return { name, error: isOpsError(error) ? error.code : 'Unreachable' };
        }
      }),
    );
  }

  /**
   * Pending requests this user could approve now: has the role, did not ask, has not approved, and
   * is in the private channel it was asked in (a request from a private channel never reaches
   * anyone outside it, nor one Slack would not tell us about).
   */
  async function waitingFor(userId: string) {
    const out = [];
    for (const request of await deps.approvals.pending()) {
      if (request.requestedBy === userId || request.approvals.some((a) => a.userId === userId)) continue;
      const role = deps.config.policies[request.action as keyof Config['policies']]?.role;
      if (!role || !(await deps.roles.has(userId, role))) continue;
      if (deps.channelMembership && request.via === 'slack' && request.channel) {
        const membership = await deps.channelMembership(userId, request.channel);
        if (membership !== 'public' && membership !== 'member') continue;
      }
      out.push(request);
    }
    return out;
  }

  async function recentOf(userId: string) {
    const entries = await deps.store.listAudit({ newestFirst: true, limit: RECENT_SCAN });
    return entries
      .filter((e) => e.actorId === userId)
      .flatMap((e) => {
        const event = eventFromAudit(e);
        return event && event.kind !== 'look' ? [event] : [];
      });
  }

  return { systems, waitingFor, recentOf };
}

export function createHomeTab(deps: HomeDeps): HomeTab {
  const now = deps.now ?? (() => new Date());
  const minInterval = deps.minIntervalMs ?? HOME_MIN_INTERVAL_MS;
  const maxUsers = deps.maxUsers ?? HOME_MAX_USERS;
  const locale = deps.locale ?? 'en';
  const log = deps.logger.child({ component: 'slack-home' });
  // Insertion order is recency: a touched user is re-inserted at the end, the first is evicted.
  const users = new Map<string, UserState>();
  const running = new Set<Promise<void>>();
  const { systems, waitingFor, recentOf } = homeReads(deps);
  let stopped = false;

  function touch(userId: string): UserState {
    const state = users.get(userId) ?? { last: 0 };
    users.delete(userId);
    users.set(userId, state);
    while (users.size > maxUsers) {
      const [oldest, old] = users.entries().next().value as [string, UserState];
      clearTimeout(old.timer);
      users.delete(oldest);
    }
    return state;
  }

  async function publish(userId: string): Promise<void> {
    const state = touch(userId);
    state.last = now().getTime();
    const [sys, alerts, silences, waiting, recent, own] = await Promise.all([
      systems(),
      deps.alerts.open(),
      deps.alerts.silences?.() ?? Promise.resolve([]),
      waitingFor(userId),
      recentOf(userId),
      deps.userLocale?.(userId),
    ]);
    const view = homeView(
      {
        systems: sys,
        alerts,
        silences,
        waiting,
        recent,
        now: now(),
        ...(state.notice ? { notice: state.notice } : {}),
      },
      own ?? locale,
    );
    await deps.client.views.publish({ user_id: userId, view });
  }

  function run(userId: string): Promise<void> {
    const p = publish(userId)
      .catch((error) => log.warn({ err: error, userId }, 'Home tab not published'))
      .finally(() => running.delete(p));
    running.add(p);
    return p;
  }

  function refresh(userId: string): void {
    if (stopped) return;
    const state = touch(userId);
    if (state.timer) return;
    const wait = state.last + minInterval - now().getTime();
    if (wait <= 0) {
      void run(userId);
      return;
    }
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (users.get(userId) === state && !stopped) void run(userId);
    }, wait);
    state.timer.unref?.();
  }

  // Replicas share the store, not their memory: each looks for what the others changed.
  let seen: string | undefined;
  async function lookForChanges(): Promise<void> {
    // Nobody's tab is kept fresh here: nothing to read.
    if (stopped || users.size === 0) return;
    try {
      const [pending, alerts, silences] = await Promise.all([
        deps.approvals.pending(),
        deps.alerts.open(),
        deps.alerts.silences?.() ?? Promise.resolve([]),
      ]);
      const current = homeFingerprint(pending, alerts, silences);
      if (seen !== undefined && current !== seen) api.changed();
      seen = current;
    } catch (error) {
      log.warn({ err: error }, 'Home tab could not look for changes');
    }
  }

  const api: HomeTab = {
    opened(userId) {
      const state = touch(userId);
      state.notice = undefined;
      refresh(userId);
    },
    changed() {
      for (const userId of [...users.keys()]) refresh(userId);
    },
    async notice(userId, text) {
      const state = touch(userId);
      state.notice = text;
      // An answer to a click is never held back: the person is waiting for it.
      clearTimeout(state.timer);
      state.timer = undefined;
      await run(userId);
    },
    lookForChanges,
    async idle() {
      while (running.size > 0) await Promise.all([...running]);
    },
    stop() {
      stopped = true;
      for (const state of users.values()) clearTimeout(state.timer);
    },
  };
  return api;
}

/** `app_home_opened` on the Home tab (not the Messages tab) refreshes that user's tab. */
export function registerHomeTab(app: App, home: HomeTab): void {
  app.event('app_home_opened', async ({ event }) => {
    if (event.tab !== 'home') return;
    home.opened(event.user);
  });
}
