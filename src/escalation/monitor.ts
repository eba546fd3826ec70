import { randomBytes } from 'node:crypto';
import type { BackendRegistry } from '../backends/registry.js';
import type { Config } from '../config/schema.js';
import { diagnose } from '../diagnosis/engine.js';
import { evidenceFromSample } from '../diagnosis/from-sample.js';
import { fixOffersOf } from '../diagnosis/offers.js';
import type { Diagnosis } from '../diagnosis/types.js';
import type { Logger } from '../lib/logger.js';
import type { AlertCause } from '../store/alert.js';
import type { OutboxInput, Store } from '../store/store.js';
import { alertCause, findingFor } from './alert-cause.js';
import { type Alert, type AlertEffect, advanceAlert, type Transition } from './lifecycle.js';
import type { Outbox } from './outbox.js';
import type { Paging } from './paging.js';
import { evaluateRules, newRuleMemory, type RuleResult, SERIES_LENGTH } from './rules.js';
import { takeSample } from './sampler.js';
import { decodeSample, encodeSample, type Sample } from './samples.js';
import { readSightings, type Sightings } from './sightings.js';
import { silenceFor } from './silences.js';
import { LONGEST_TREND_MS } from './trend.js';

/** How long a delivered outbox item is kept (the monitor prunes older ones every tick). */
export const OUTBOX_KEEP_MS = 24 * 3_600_000;

/** The lease every monitor competes for; exactly one holder samples and posts. */
export const MONITOR_LEASE = 'monitor';
/** The lease of the processes that lift run-out limits without ticking (`Monitor.limitLease`). */
export const LIMIT_LEASE = 'limit-expiry';

export interface MonitorDeps {
  config: Config;
  backends: BackendRegistry;
  store: Store;
  outbox: Outbox;
  logger: Logger;
  now: () => Date;
  /** This process's name for the lease and outbox claims. */
  owner: string;
  /** The channel a system's alerts go to (part of the group key: a message lives in one channel). */
  channelFor?: (system: string) => string | undefined;
  /** Pages (`paging:`): each tick triggers those due and moves the others on with their alerts. */
  paging?: Paging;
}

export type TickOutcome =
  | { leader: false; holder?: { owner: string; expiresAt: string } }
  | {
      leader: true;
      sample: Sample;
      firing: Alert[];
      opened: Alert[];
      resolved: Alert[];
    };

export function newAlertId(): string {
  return `a-${randomBytes(5).toString('hex').slice(0, 8)}`;
}

export function newGroupId(): string {
  return `g-${randomBytes(5).toString('hex').slice(0, 8)}`;
}

/** The group a new alert joins, decided by the tick before it is stored. */
interface GroupChoice {
  id: string;
  key: string;
}

/**
 * What alerts share one message under `groupBy` (`cause`, `system`, `severity`, `rule`, `queue`),
 * and always the channel: a message lives in one channel. Alerts without a cause share its empty
 * value, so they group by the other fields as before.
 */
export function groupKeyOf(
  fields: readonly ('cause' | 'system' | 'severity' | 'rule' | 'queue')[],
  alert: {
    system: string;
    severity: string;
    rule: string;
    queue?: string | undefined;
    cause?: { id: string } | undefined;
  },
  channel: string | undefined,
): string {
  const values: Record<string, string> = {
    cause: alert.cause?.id ?? '',
    system: alert.system,
    severity: alert.severity,
    rule: alert.rule,
    queue: alert.queue ?? '',
  };
  return JSON.stringify([channel ?? '', ...fields.map((f) => values[f] ?? '')]);
}

export function newOwnerId(label: string): string {
  return `${label}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

const toOutbox = (effects: readonly AlertEffect[]): OutboxInput[] =>
  effects.map((effect) =>
    effect.kind === 'thread'
      ? {
          kind: 'thread',
          payload: {
            reason: effect.reason,
            value: effect.value,
            ...(effect.mention ? { mention: effect.mention } : {}),
          },
        }
      : { kind: effect.kind, payload: {} },
  );

/**
 * An alert's queue chart follows its post, and its resolution: the thread shows the line going up
 * and coming back down. Queued after the message it belongs to, so it is delivered in order.
 */
function withCharts(items: OutboxInput[], before: Alert | undefined, after: Alert): OutboxInput[] {
  if (after.queue === undefined) return items;
  const resolvedNow = after.status === 'resolved' && before?.status === 'firing';
  const posted = items.some((i) => i.kind === 'post');
  return posted || resolvedNow ? [...items, { kind: 'chart', payload: {} }] : items;
}

/** What a tick of the leader reports: the sample it took and how the alerts moved. */
export type LeaderOutcome = Extract<TickOutcome, { leader: true }>;

/** What one tick moves alerts with: the monitor's deps and settings, and the tick's own choices. */
interface TickContext {
  deps: MonitorDeps;
  settings: Config['escalation'];
  now: number;
}

/** Applies one transition; on a lost race (an ack landed meanwhile) re-reads and redoes it once. */
async function applyResult(
  tick: TickContext,
  result: RuleResult,
  before: { open: Alert | undefined; lastResolved: Alert | undefined },
  silence: string | undefined,
  group: (() => GroupChoice) | undefined,
  cause: AlertCause | undefined,
): Promise<Alert | undefined> {
  const { deps, settings, now } = tick;
  const { store } = deps;
  const { lastResolved } = before;
  let current = before.open;
  for (let attempt = 0; attempt < 3; attempt++) {
    const step: Transition = advanceAlert(current, lastResolved, result, now, settings, newAlertId, silence);
    if (!step.changed || !step.alert) return step.alert;
    // Its cause is fixed when it opens (or fires again): its message and page stay the same.
    if (!current) {
      const { cause: _before, ...fresh } = step.alert;
      step.alert = cause ? { ...fresh, cause } : fresh;
    }
    if (!current && group) {
      // A new alert, or one firing again: it joins the group its key has now.
      const choice = group();
      step.alert = { ...step.alert, groupId: choice.id, groupKey: choice.key };
    }
    const outbox = withCharts(toOutbox(step.effects), current, step.alert);
    if (deps.paging) {
      const paged = deps.paging.resolvedWithPages(step.alert);
      step.alert = paged.alert;
      outbox.push(...paged.outbox);
    }
    const isNew = !current && step.alert.id !== lastResolved?.id;
    const stored = isNew
      ? await store.escalation.insertAlert(step.alert, outbox)
      : await store.escalation.writeAlert(step.alert, outbox);
    if (stored) return stored;
    // Someone else wrote first (a user's ack, another monitor during a handover): start again
    // from what is stored now, so nothing is posted twice.
    const firing = await store.escalation.listAlerts({ status: 'firing' });
    current = firing.find((a) => a.key === result.key);
    if (!current && isNew) return undefined;
  }
  deps.logger.warn({ key: result.key }, 'alert kept changing under the monitor; left for the next tick');
  return current;
}

/**
 * How this tick's new alerts are grouped (undefined: `groupBy: none`). A new alert joins the
 * firing group with its key, or starts one; when more than `maxAlertsPerMessage` open in one
 * tick (a storm), they all go into one new group whose message is a summary.
 */
function groupChooser(
  tick: TickContext,
  firingBefore: readonly Alert[],
  openingCount: number,
): ((result: RuleResult, cause: AlertCause | undefined) => GroupChoice) | undefined {
  const { settings, deps } = tick;
  const fields = settings.groupBy;
  if (fields === 'none') return undefined;
  const groups = new Map<string, string>();
  for (const alert of firingBefore)
    if (alert.groupId && alert.groupKey && alert.groupKey !== 'burst')
      groups.set(alert.groupKey, alert.groupId);
  const burst = openingCount > settings.maxAlertsPerMessage ? { id: newGroupId(), key: 'burst' } : undefined;
  // Grouped by cause, a storm's alerts with a cause go to their cause's message (each one a
  // summary when it outgrows `maxAlertsPerMessage`); the storm message keeps the rest.
  const byCause = fields.includes('cause');
  return (result, cause) => {
    if (burst && !(byCause && cause)) return burst;
    const key = groupKeyOf(
      fields,
      {
        system: result.system,
        severity: result.rule.severity,
        rule: result.rule.name,
        queue: result.queue,
        cause,
      },
      deps.channelFor?.(result.system),
    );
    let id = groups.get(key);
    if (!id) {
      id = newGroupId();
      groups.set(key, id);
    }
    return { id, key };
  };
}

/**
 * The causes of the alerts opening this tick: one diagnosis per system with an alert opening,
 * from the tick's own sample and the stored ones (no read of its own). A diagnosis that fails
 * names no cause; the alert opens all the same.
 */
function openingCauses(
  tick: TickContext,
  sample: Sample,
  past: readonly Sample[],
  opening: readonly RuleResult[],
): (result: RuleResult) => AlertCause | undefined {
  const { config, logger } = tick.deps;
  const diagnoses = new Map<string, Diagnosis | undefined>();
  for (const system of new Set(opening.map((r) => r.system))) {
    const read = sample.systems.find((s) => s.name === system);
    if (!read?.ok) continue;
    try {
      diagnoses.set(
        system,
        diagnose(
          evidenceFromSample(config, read, past, tick.now, fixOffersOf(tick.deps.backends.get(system))),
        ),
      );
    } catch (error) {
      logger.warn({ err: error, system }, 'diagnosis failed; alerts open without a cause');
    }
  }
  return (result) => {
    const diagnosis = diagnoses.get(result.system);
    const finding = diagnosis && findingFor(diagnosis, { rule: result.rule.name, queue: result.queue });
    return finding ? alertCause(finding, tick.now, config.locale) : undefined;
  };
}

/**
 * Moves every alert the tick's rule results touch on, each in its own conditional write: the
 * alerts that opened, resolved, and are firing after it (those not evaluated this tick, their
 * system unreachable or their rule removed, stay as they are: not seeing a problem is not its end).
 */
async function moveAlerts(
  tick: TickContext,
  sample: Sample,
  past: readonly Sample[],
  results: readonly RuleResult[],
  firingNow: readonly Alert[],
  silences: Parameters<typeof silenceFor>[0],
): Promise<Omit<LeaderOutcome, 'leader' | 'sample'>> {
  const { store } = tick.deps;
  const firing = new Map(firingNow.map((a) => [a.key, a]));
  const openingResults = results.filter((r) => r.firing && !firing.has(r.key));
  const opening = openingResults.map((r) => r.key);
  const resolvedBefore = new Map(
    (await store.escalation.listAlerts({ status: 'resolved', keys: opening })).map((a) => [a.key, a]),
  );
  const opened: Alert[] = [];
  const resolved: Alert[] = [];
  const stillFiring: Alert[] = [];
  const choose = groupChooser(tick, [...firing.values()], opening.length);
  const causeOf = openingCauses(tick, sample, past, openingResults);
  for (const result of results) {
    const open = firing.get(result.key);
    const cause = open ? undefined : causeOf(result);
    const after = await applyResult(
      tick,
      result,
      { open, lastResolved: open ? undefined : resolvedBefore.get(result.key) },
      silenceFor(silences, { rule: result.rule.name, system: result.system, queue: result.queue })?.id,
      choose && (() => choose(result, cause)),
      cause,
    );
    firing.delete(result.key);
    if (!after) continue;
    if (after.status === 'resolved' && open) resolved.push(after);
    if (after.status === 'firing') {
      stillFiring.push(after);
      if (!open) opened.push(after);
    }
  }
  stillFiring.push(...firing.values());
  return { firing: stillFiring, opened, resolved };
}

/**
 * The samples of earlier ticks, parsed, while this monitor keeps the lease tick after tick:
 * each tick then reads and parses only the rows written since by others (its own are kept as
 * taken; parsing the whole history every tick was most of a tick). Dropped (`forget`) whenever
 * another monitor holds the lease, since it writes samples of its own.
 */
function sampleHistory(deps: MonitorDeps, retentionMs: number) {
  const { store, logger } = deps;
  let known: { id: number; at: string; sample: Sample }[] | undefined;
  return {
    forget(): void {
      known = undefined;
    },
    /** A sample this monitor stored itself (its row `id`), kept as taken. */
    add(id: number, at: string, sample: Sample): void {
      known?.push({ id, at, sample });
    },
    async read(now: Date): Promise<Sample[]> {
      const sinceAt = new Date(now.getTime() - retentionMs).toISOString();
      const last = known?.at(-1);
      const rows = await store.escalation.listSamples(
        sinceAt,
        last ? { after: { id: last.id, at: last.at }, limit: 100_000 } : undefined,
      );
      known = [
        ...(known ?? []).filter((row) => row.at >= sinceAt),
        ...rows.map((row) => ({ id: row.id, at: row.at, sample: decodeSample(row.data) })),
      ];
      return known.map((row) => row.sample);
    },
    /**
     * The head sightings of the Celery systems the history read has no good sample of: a monitor
     * back after a stop longer than `retentionMs` still counts a message's wait from when it first
     * saw it (the samples are kept for `trend`'s day), instead of starting again at 0. One small read,
     * only on such a tick.
     */
    async olderSightings(past: readonly Sample[]): Promise<Sightings | undefined> {
      const seen = new Set(past.flatMap((s) => s.systems.filter((sys) => sys.ok).map((sys) => sys.name)));
      const missing = deps.backends
        .all()
        .filter((b) => b.facts.waitingAgeFromSightings && !seen.has(b.name))
        .map((b) => b.name);
      if (missing.length === 0) return undefined;
      return await readSightings(store.escalation, missing).catch((error: unknown) => {
        logger.warn({ err: error }, 'could not read older head sightings; Celery ages start again');
        return undefined;
      });
    },
  };
}

/**
 * The monitor: one tick samples every system (the reads of `status`), stores the sample,
 * evaluates the rules over the stored history, and moves each alert on, storing the new state and
 * the Slack messages it calls for in one conditional write. Slack itself is the outbox's business:
 * a tick never waits on it. Who ticks is the lease's business (`lease.claim`); when, the
 * background jobs' (src/background/: `limit-expiry` then `monitor-tick`, on the leader).
 */
export function createMonitor(deps: MonitorDeps) {
  const { config, store } = deps;
  const settings = config.escalation;
  const intervalMs = settings.intervalSeconds * 1000;
  // Held for one and a half intervals, renewed every half interval: a follower checking every
  // half interval takes over within two intervals of the leader's last renewal.
  const leaseMs = Math.round(intervalMs * 1.5);
  const longestWindow = Math.max(0, ...settings.rules.map((r) => Math.max(r.for ?? 0, r.within ?? 0)));
  const retentionMs = longestWindow + (SERIES_LENGTH + 2) * intervalMs;
  const history = sampleHistory(deps, retentionMs);
  /** What one tick's rule evaluation leaves the next, over the same samples plus one. */
  const ruleMemory = newRuleMemory();

  /** A lease by name, taken or renewed by `claim`; `lost` runs when another process holds it. */
  const leaseNamed = (name: string, lost: () => void = () => {}) => ({
    /** How often a process takes or renews it (a follower's check, the leader's renewal). */
    everyMs: Math.max(250, Math.round(intervalMs / 2)),
    async claim(): Promise<boolean> {
      const now = deps.now();
      const held = await store.escalation.acquireLease(
        name,
        deps.owner,
        new Date(now.getTime() + leaseMs).toISOString(),
        now.toISOString(),
      );
      if (!held) lost();
      return held;
    },
  });
  /** The lease every monitor competes for: the leader's jobs run where `claim` says true. */
  const lease = leaseNamed(MONITOR_LEASE, () => history.forget());
  /**
   * The lease of a process that lifts run-out limits but does not tick (a bot with no alert
   * channel): one such process lifts them, and the monitor's own lease stays free for a
   * `monitor --once` that samples.
   */
  const limitLease = leaseNamed(LIMIT_LEASE);

  /** Who holds the lease now, for a process that did not get it. */
  async function follower(): Promise<TickOutcome> {
    const holder = await store.escalation.getLease(MONITOR_LEASE);
    return holder ? { leader: false, holder } : { leader: false };
  }

  /** The leader's tick (the lease taken by the caller): sample, evaluate, store, move the alerts. */
  async function leaderTick(): Promise<LeaderOutcome> {
    const now = deps.now();
    const past = await history.read(now);
    const sampling = takeSample(deps, past, now.getTime(), await history.olderSightings(past));
    // Should the store fail below, the tick ends there; the sample is then not waited for.
    sampling.catch(() => undefined);
    // While the systems answer, what does not depend on them (a PostgreSQL store's round trips
    // overlap theirs): pruning, and the alerts and silences as they are now. An alert changed by
    // someone meanwhile is caught by its conditional write, as ever.
    const [firingNow, silences] = await Promise.all([
      store.escalation.listAlerts({ status: 'firing' }),
      store.escalation.listSilences(now.toISOString()),
      // Kept for `trend`'s longest window, though the rules read only `retentionMs` of it.
      store.escalation.pruneSamples(
        new Date(now.getTime() - Math.max(retentionMs, LONGEST_TREND_MS)).toISOString(),
      ),
      // Delivered messages are never read again; a day of them is left for whoever investigates.
      store.escalation.pruneOutbox(new Date(now.getTime() - OUTBOX_KEEP_MS).toISOString()),
    ]);
    const sample = await sampling;
    const at = now.toISOString();
    // Stored while the rules are evaluated (a PostgreSQL store's round trip overlaps them).
    const appended = store.escalation.appendSample(at, encodeSample(sample));
    appended.catch(() => undefined);
    // The results that can change something: those firing, and those of the alerts open.
    const results = evaluateRules(settings.rules, [...past, sample], now.getTime(), {
      memory: ruleMemory,
      only: new Set(firingNow.map((a) => a.key)),
    });
    history.add(await appended, at, sample);
    const tick: TickContext = { deps, settings, now: now.getTime() };
    const moved = await moveAlerts(tick, sample, past, results, firingNow, silences);
    // After the alerts are stored: a page is due once its alert has been open `afterMinutes`, and
    // follows its message's acknowledgement and end. A page that fails to be queued (the store
    // busy) is queued next tick; the tick itself goes on.
    await deps.paging?.settle([...moved.firing, ...moved.resolved]).catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'pages not settled this tick; tried again on the next one');
    });
    return { leader: true, sample, ...moved };
  }

  return {
    /** How often the leader ticks (`escalation.intervalSeconds`). */
    intervalMs,
    lease,
    limitLease,
    leaderTick,
    follower,
    /**
     * One tick without the scheduler (tests, benches): the lease, then the leader's tick, or who
     * holds the lease. Expired limits are not lifted here: that is the leader's `limit-expiry` job.
     */
    async tick(): Promise<TickOutcome> {
      return (await lease.claim()) ? await leaderTick() : await follower();
    },
    /** Waits for the outbox's deliveries, and gives the lease back for a quick handover. */
    async stop(): Promise<void> {
      await deps.outbox.idle();
      for (const name of [MONITOR_LEASE, LIMIT_LEASE])
        await store.escalation.releaseLease(name, deps.owner).catch(() => undefined);
    },
  };
}

export type Monitor = ReturnType<typeof createMonitor>;
