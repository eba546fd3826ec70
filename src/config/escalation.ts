import * as z from 'zod/mini';
import { type ConfigParts, intIn } from './parts.js';
import type { ConfigProblems } from './problems.js';

/** A rule as a config file writes it (`for: 2m`), before the schema reads it. */
interface RuleInput {
  name: string;
  queues?: string[];
  metric: (typeof QUEUE_METRICS)[number] | (typeof SYSTEM_METRICS)[number];
  above?: number;
  below?: number;
  for?: string;
  within?: string;
  severity?: 'critical' | 'warning' | 'info';
  includePaused?: boolean;
  mentionOwner?: boolean;
  when?: { metric: (typeof QUEUE_METRICS)[number]; above?: number; below?: number }[];
}

/** What a rule can watch; README lists what each one means. */
export const QUEUE_METRICS = [
  'waiting',
  'active',
  'delayed',
  'failed',
  'failedIncrease',
  'oldestWaitingSeconds',
  'drainRate',
  'minutesToDrain',
  'workers',
  'throughput',
  'failedPerMinute',
  'waitP95Seconds',
  'runP95Seconds',
] as const;
export const SYSTEM_METRICS = [
  'redisMemoryRatio',
  'evictionPolicy',
  'workerChurn',
  'unreachableSamples',
  'persistenceFailing',
  'networkUnstableSamples',
] as const;

/**
 * The seeds' escalation criteria (Zeus: Redis out of memory, a queue over 100,000, alarms more than
 * 30 minutes late, a worker crash loop, no capacity to keep a queue empty, persistence failing; Pushizo: the 60 s
 * campaign-start SLO on `scheduler`, the failed set growing), used when `rules` is not given.
 */
export const DEFAULT_ESCALATION_RULES: readonly RuleInput[] = [
  { name: 'backlog', queues: ['*'], metric: 'waiting', above: 100_000, for: '2m', severity: 'critical' },
  {
    name: 'alarm-latency',
    queues: ['*/celery:alarm_processing'],
    metric: 'oldestWaitingSeconds',
    above: 1800,
    severity: 'critical',
  },
  {
    name: 'campaign-start',
    queues: ['*/scheduler'],
    metric: 'oldestWaitingSeconds',
    above: 60,
    for: '1m',
    severity: 'warning',
  },
  {
    name: 'dlq-growth',
    queues: ['*'],
    metric: 'failedIncrease',
    above: 100,
    within: '5m',
    severity: 'warning',
  },
  { name: 'no-capacity', queues: ['*'], metric: 'minutesToDrain', above: 60, for: '5m', severity: 'warning' },
  { name: 'no-workers', queues: ['*'], metric: 'workers', below: 1, for: '1m', severity: 'critical' },
  { name: 'redis-memory', metric: 'redisMemoryRatio', above: 0.9, severity: 'critical' },
  { name: 'eviction-policy', metric: 'evictionPolicy', above: 0, severity: 'warning' },
  { name: 'worker-crash-loop', metric: 'workerChurn', above: 3, within: '5m', severity: 'critical' },
  { name: 'redis-unreachable', metric: 'unreachableSamples', above: 2, severity: 'critical' },
  // "Redis veri bozulması": a background save or an AOF write that failed.
  { name: 'redis-persistence', metric: 'persistenceFailing', above: 0, severity: 'critical' },
  // "Redis'e bağlantı kararsız": 3 of the samples of 5 minutes unreadable or showing a flapping link.
  {
    name: 'redis-network',
    metric: 'networkUnstableSamples',
    above: 2,
    within: '5m',
    severity: 'warning',
  },
];

/** `escalation:`, the monitor's rules and how its alerts are sent, worded by `p`. */
export function buildEscalationSchema(p: ConfigProblems, parts: ConfigParts) {
  const { duration, principal } = parts;

  /** `system/queue` with `*` as a wildcard (`pushizo/dispatch-*`, `*`). */
  const queuePattern = z.string().check(z.regex(/^[^\s]+$/, { error: p.queuePattern }));

  /** A further condition on the same queue, all of which must hold for the rule to breach. */
  const condition = z
    .strictObject({
      metric: z.enum(QUEUE_METRICS, { error: p.metric(QUEUE_METRICS.join(', ')) }),
      above: z.optional(z.number()),
      below: z.optional(z.number()),
    })
    .check(z.refine((c) => (c.above === undefined) !== (c.below === undefined), { error: p.aboveOrBelow }));

  const rule = z
    .strictObject({
      name: z.string().check(
        z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
          error: p.name,
        }),
      ),
      queues: z.optional(z.array(queuePattern).check(z.minLength(1))),
      metric: z.enum([...QUEUE_METRICS, ...SYSTEM_METRICS], {
        error: p.metric([...QUEUE_METRICS, ...SYSTEM_METRICS].join(', ')),
      }),
      above: z.optional(z.number()),
      below: z.optional(z.number()),
      for: z.optional(duration),
      within: z.optional(duration),
      severity: z._default(z.enum(['critical', 'warning', 'info']), 'warning'),
      /** A paused queue is skipped (not "no workers", not a backlog) unless the rule asks for it. */
      includePaused: z.optional(z.boolean()),
      /** The alert mentions the owner of its queue (`queues[].owner`), so the owning team is paged. */
      mentionOwner: z.optional(z.boolean()),
      /** `throughput below 10` only `when: [{ metric: waiting, above: 50000 }]`: every one must hold. */
      when: z.optional(z.array(condition).check(z.minLength(1))),
    })
    .check(
      z.refine((r) => (r.above === undefined) !== (r.below === undefined), {
        error: p.aboveOrBelow,
      }),
      z.refine((r) => r.when === undefined || (QUEUE_METRICS as readonly string[]).includes(r.metric), {
        error: p.whenNeedsQueueMetric,
        path: ['when'],
      }),
    );

  const escalation = z
    .strictObject({
      intervalSeconds: z._default(intIn(1, 3600), 30),
      renotifyMinutes: z._default(z.number().check(z.minimum(1), z.maximum(24 * 60)), 30),
      escalateAfterMinutes: z._default(z.number().check(z.minimum(0), z.maximum(24 * 60)), 15),
      escalateTo: z._default(z.array(principal), []),
      clearAfterSamples: z._default(intIn(1, 100), 2),
      /**
       * How firing alerts share Slack messages, like Alertmanager's `group_by`: one message per
       * distinct value of these fields, listing its alerts; `none`: one message per alert.
       */
      groupBy: z._default(
        z.union([z.literal('none'), z.array(z.enum(['cause', 'system', 'severity', 'rule', 'queue']))], {
          error: p.groupBy,
        }),
        // Alerts one diagnosed cause explains share a message that leads with it (issue 36 §3).
        () => ['cause', 'system'] as ('cause' | 'system' | 'severity' | 'rule' | 'queue')[],
      ),
      /**
       * Alerts one grouped message lists with their own buttons. More than this opening in one tick
       * (a storm) become one summary message that points to `alerts`.
       */
      maxAlertsPerMessage: z._default(intIn(1, 20), 10),
      // `prefault`: the defaults are written as a person would (`2m`) and parsed like a config file.
      rules: z.prefault(z.array(rule), () => DEFAULT_ESCALATION_RULES.map((r) => ({ ...r }))),
    })
    .check(
      z.superRefine((value, ctx) => {
        const seen = new Set<string>();
        value.rules.forEach((r, index) => {
          if (seen.has(r.name))
            ctx.addIssue({
              code: 'custom',
              path: ['rules', index, 'name'],
              message: p.duplicateRule(r.name),
            });
          seen.add(r.name);
        });
      }),
    );

  return escalation;
}
