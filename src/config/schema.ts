import { z } from 'zod';
import { parseDuration } from '../escalation/duration.js';

const redisUrl = z
  .string({ error: 'expected a redis:// or rediss:// URL' })
  .regex(/^rediss?:\/\/.+/, { error: 'expected a redis:// or rediss:// URL' });

/** Also Celery's Sentinel broker form: `sentinel://h1:26379;sentinel://h2:26379/mymaster`. */
const watchedRedisUrl = z
  .string({ error: 'expected a redis://, rediss:// or sentinel:// URL' })
  .regex(/^(rediss?|sentinel):\/\/.+/, { error: 'expected a redis://, rediss:// or sentinel:// URL' });

/** Files for `rediss://`: a private CA, and a client certificate when Redis asks for one. */
const redisTls = z
  .object({
    ca: z.string().min(1).optional(),
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    /** The host name the server's certificate must carry, when it differs from the URL's. */
    servername: z.string().min(1).optional(),
  })
  .strict();

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, { error: 'expected host:port' });

/** How a system's Redis is reached beyond its URL: TLS files, Sentinel. */
const redisShape = {
  redis: watchedRedisUrl,
  tls: redisTls.optional(),
  /**
   * Sentinel, as ioredis names it: `sentinels` (`host:port` each) and the master's `name`
   * (Celery's `master_name`). Either this, a `sentinel://` URL, or both (the hosts add up).
   */
  sentinel: z
    .object({ sentinels: z.array(hostPort).min(1).optional(), name: z.string().min(1).optional() })
    .strict()
    .optional(),
};

const slackId = (prefixes: string, what: string) =>
  z.string().regex(new RegExp(`^[${prefixes}][A-Z0-9]+$`), { error: `expected a Slack ${what} id` });

/** A queue name as it appears in `system/queue`: no slash, no whitespace. */
const queueName = z.string().regex(/^[^\s/]+$/, { error: 'expected a queue name without "/" or spaces' });

const systemName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: 'expected a name of letters, digits, "-", "_" or "."' });

/** A count of replicas, containers or pool processes. */
const replicas = z.number().int().min(0).max(1000);

/** A Kubernetes object name (RFC 1123 label/subdomain, as `kubectl` accepts). */
const kubeName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
  error: 'expected a Kubernetes name (lower-case, digits, "-")',
});

const kubernetesGroup = z
  .object({
    type: z.literal('kubernetes'),
    namespace: kubeName,
    deployment: kubeName,
    min: replicas,
    max: replicas,
  })
  .strict();

const composeGroup = z
  .object({
    type: z.literal('compose'),
    project: z.string().min(1),
    file: z.string().min(1),
    service: z.string().min(1),
    min: replicas,
    max: replicas,
  })
  .strict();

const celeryPoolGroup = z
  .object({ type: z.literal('celery-pool'), min: replicas.min(1), max: replicas.min(1) })
  .strict();

const workerGroup = z
  .discriminatedUnion('type', [kubernetesGroup, composeGroup, celeryPoolGroup], {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? 'expected type: kubernetes, compose or celery-pool'
        : (issue.message ?? 'invalid worker group'),
  })
  .refine((group) => group.min <= group.max, { error: 'expected min <= max', path: ['max'] });

/** `workers:` of a system: group name → how its capacity is changed (issue 9). */
const workerGroups = z.record(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
    error: 'expected a group name of letters, digits, "-", "_" or "."',
  }),
  workerGroup,
);

const bullmqSystem = z
  .object({
    name: systemName,
    type: z.literal('bullmq'),
    ...redisShape,
    /**
     * Redis Cluster: `redis` and `nodes` are startup nodes. BullMQ needs a `{hash-tag}` prefix
     * there, so every key of every queue lives in one slot.
     */
    cluster: z.boolean().optional(),
    nodes: z.array(redisUrl).min(1).optional(),
    prefix: z.string().min(1).default('bull'),
    queues: z.array(queueName).min(1).optional(),
    workers: workerGroups.optional(),
  })
  .strict();

const celerySystem = z
  .object({
    name: systemName,
    type: z.literal('celery'),
    ...redisShape,
    resultBackend: watchedRedisUrl.optional(),
    queues: z.array(queueName).min(1).optional(),
    globalKeyprefix: z.string().default(''),
    /** kombu's `priority_steps` transport option. */
    prioritySteps: z.array(z.number().int().min(0).max(255)).min(1).default([0, 3, 6, 9]),
    /** kombu's `sep` transport option. */
    separator: z.string().min(1).default('\x06\x16'),
    /** kombu's `fanout_prefix`: true → `/<db>.`, false → none, a string → itself. */
    fanoutPrefix: z.union([z.boolean(), z.string()]).default(true),
    /** How long worker inspection waits for pidbox replies. */
    inspectTimeoutMs: z.number().int().min(50).max(10_000).default(1000),
    workers: workerGroups.optional(),
  })
  .strict();

const system = z.discriminatedUnion('type', [bullmqSystem, celerySystem], {
  error: (issue) =>
    issue.code === 'invalid_union' ? 'expected type: bullmq or celery' : (issue.message ?? 'invalid system'),
});

const principal = z
  .string({ error: 'expected "*", a Slack user id (U…/W…) or a user group id (S…)' })
  .regex(/^(\*|[UWS][A-Z0-9]+)$/, { error: 'expected "*", a Slack user id (U…/W…) or a user group id (S…)' });

const role = z.enum(['viewer', 'operator', 'admin']);

const policy = z
  .object({
    role: role,
    approvals: z.number().int().min(0).max(5).default(0),
  })
  .strict();

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
] as const;
export const SYSTEM_METRICS = [
  'redisMemoryRatio',
  'evictionPolicy',
  'workerChurn',
  'unreachableSamples',
] as const;

const duration = z
  .string({ error: 'expected a duration like 30s, 2m or 1h' })
  .refine((text) => parseDuration(text) !== undefined, { error: 'expected a duration like 30s, 2m or 1h' })
  .transform((text) => parseDuration(text) as number);

/** `system/queue` with `*` as a wildcard (`pushizo/dispatch-*`, `*`). */
const queuePattern = z
  .string()
  .regex(/^[^\s]+$/, { error: 'expected a pattern like "system/queue-*" or "*"' });

const rule = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
      error: 'expected a name of letters, digits, "-", "_" or "."',
    }),
    queues: z.array(queuePattern).min(1).optional(),
    metric: z.enum([...QUEUE_METRICS, ...SYSTEM_METRICS], {
      error: `expected one of: ${[...QUEUE_METRICS, ...SYSTEM_METRICS].join(', ')}`,
    }),
    above: z.number().optional(),
    below: z.number().optional(),
    for: duration.optional(),
    within: duration.optional(),
    severity: z.enum(['critical', 'warning', 'info']).default('warning'),
  })
  .strict()
  .refine((r) => (r.above === undefined) !== (r.below === undefined), {
    error: 'expected exactly one of `above` or `below`',
  });

/**
 * The seeds' escalation criteria (Zeus: Redis out of memory, a queue over 100,000, alarms more than
 * 30 minutes late, a worker crash loop, no capacity to keep a queue empty; Pushizo: the 60 s
 * campaign-start SLO on `scheduler`, the failed set growing), used when `rules` is not given.
 */
export const DEFAULT_ESCALATION_RULES: readonly z.input<typeof rule>[] = [
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
];

const escalation = z
  .object({
    intervalSeconds: z.number().int().min(1).max(3600).default(30),
    renotifyMinutes: z
      .number()
      .min(1)
      .max(24 * 60)
      .default(30),
    escalateAfterMinutes: z
      .number()
      .min(0)
      .max(24 * 60)
      .default(15),
    escalateTo: z.array(principal).default([]),
    clearAfterSamples: z.number().int().min(1).max(100).default(2),
    // `prefault`: the defaults are written as a person would (`2m`) and parsed like a config file.
    rules: z.array(rule).prefault(() => DEFAULT_ESCALATION_RULES.map((r) => ({ ...r }))),
  })
  .strict()
  .superRefine((value, ctx) => {
    const seen = new Set<string>();
    value.rules.forEach((r, index) => {
      if (seen.has(r.name))
        ctx.addIssue({
          code: 'custom',
          path: ['rules', index, 'name'],
          message: `duplicate rule name "${r.name}"`,
        });
      seen.add(r.name);
    });
  });

export const configSchema = z
  .object({
    slack: z
      .object({
        incidentChannel: slackId('CGD', 'channel').optional(),
        auditChannel: slackId('CGD', 'channel').optional(),
        allowedChannels: z.array(slackId('CGD', 'channel')).default([]),
      })
      .strict()
      .default({ allowedChannels: [] }),
    store: z
      .string()
      .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, { error: 'expected sqlite:<path> or postgres://…' })
      .default('sqlite:./data/queue-ops.db'),
    roles: z
      .object({
        viewer: z.array(principal).default(['*']),
        operator: z.array(principal).default([]),
        admin: z.array(principal).default([]),
      })
      .strict()
      .default({ viewer: ['*'], operator: [], admin: [] }),
    policies: z
      .object({
        pause: policy.default({ role: 'operator', approvals: 0 }),
        resume: policy.default({ role: 'operator', approvals: 0 }),
        retry: policy.default({ role: 'operator', approvals: 0 }),
        scale: policy.default({ role: 'operator', approvals: 1 }),
        purge: policy.default({ role: 'admin', approvals: 1 }),
        revoke: policy.default({ role: 'operator', approvals: 0 }),
        fail: policy.default({ role: 'operator', approvals: 0 }),
        /** Restoring a purge from its archive: as strict as purge unless configured. */
        undo: policy.default({ role: 'admin', approvals: 1 }),
      })
      .strict()
      .default({
        pause: { role: 'operator', approvals: 0 },
        resume: { role: 'operator', approvals: 0 },
        retry: { role: 'operator', approvals: 0 },
        scale: { role: 'operator', approvals: 1 },
        purge: { role: 'admin', approvals: 1 },
        revoke: { role: 'operator', approvals: 0 },
        fail: { role: 'operator', approvals: 0 },
        undo: { role: 'admin', approvals: 1 },
      }),
    /** Where purged jobs are written before they leave Redis, and how long they are kept. */
    archive: z
      .object({
        dir: z.string().min(1).default('./data/archive'),
        retentionDays: z.number().int().min(1).max(3650).default(7),
      })
      .strict()
      .default({ dir: './data/archive', retentionDays: 7 }),
    approvals: z
      .object({
        ttlMinutes: z
          .number()
          .int()
          .min(1)
          .max(24 * 60)
          .default(15),
        require2fa: z.boolean().default(false),
        /**
         * An approval typed on the command line by the OS user (on the same host) who made the
         * request, or gave an earlier approval of it: refused as a self-approval, since `--user` is
         * only a claim. `allow` is for demos and tests that play two people from one shell.
         */
        cliSameOsUser: z.enum(['allow', 'refuse']).default('refuse'),
      })
      .strict()
      .default({ ttlMinutes: 15, require2fa: false, cliSameOsUser: 'refuse' }),
    audit: z
      .object({
        /** The audit key (HMAC-SHA256), as text; QUEUE_OPS_AUDIT_KEY instead is the same. */
        keyFile: z.string().min(1).optional(),
        /** Keys that sealed older entries, so they still verify after a rotation. */
        previousKeyFiles: z.array(z.string().min(1)).default([]),
        /** An append-only JSON-lines file, one line per entry, outside the store. */
        witnessFile: z.string().min(1).optional(),
      })
      .strict()
      .default({ previousKeyFiles: [] }),
    rateLimit: z
      .object({
        /** Mutating commands (pause, approve, deny…) one user may run per minute. */
        perUserPerMinute: z.number().int().min(1).max(10_000).default(10),
      })
      .strict()
      .default({ perUserPerMinute: 10 }),
    // Every message, button, error, alert and approval; a Slack user's own tr-TR or en-* overrides it.
    locale: z.enum(['en', 'tr']).default('en'),
    metrics: z
      .object({
        /** How long one read of a system serves `/metrics` scrapes. */
        cacheSeconds: z.number().min(0).max(300).default(10),
      })
      .strict()
      .default({ cacheSeconds: 10 }),
    escalation: escalation.prefault({}),
    systems: z.array(system).min(1, { error: 'expected at least one system' }),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.systems.forEach((s, index) => {
      const sentinelUrl = /^sentinel:\/\//i.test(s.redis);
      if (
        (sentinelUrl || s.sentinel) &&
        !s.sentinel?.name &&
        !(sentinelUrl && sentinelMasterInUrl(s.redis))
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['systems', index, 'sentinel', 'name'],
          message:
            'expected the Sentinel master name (sentinel.name, or the URL path: sentinel://h:26379/mymaster)',
        });
      }
      if (s.type === 'bullmq' && s.cluster && !/^\{[^}]+\}$/.test(s.prefix)) {
        ctx.addIssue({
          code: 'custom',
          path: ['systems', index, 'prefix'],
          message: `expected a {hash-tag} prefix on Redis Cluster, as BullMQ requires (e.g. "{${s.prefix}}")`,
        });
      }
      if (s.sentinel && !sentinelUrl && !s.sentinel.sentinels) {
        ctx.addIssue({
          code: 'custom',
          path: ['systems', index, 'sentinel', 'sentinels'],
          message: 'expected sentinels: [host:port, …] (or a sentinel:// URL in redis)',
        });
      }
      const first = seen.get(s.name);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['systems', index, 'name'],
          message: `duplicate system name "${s.name}" (also systems[${first}])`,
        });
      } else {
        seen.set(s.name, index);
      }
      // A Celery pool is resized over pidbox, which only Celery workers answer.
      for (const [group, spec] of Object.entries(s.workers ?? {})) {
        if (spec.type === 'celery-pool' && s.type !== 'celery') {
          ctx.addIssue({
            code: 'custom',
            path: ['systems', index, 'workers', group, 'type'],
            message: 'celery-pool groups only exist on celery systems; expected kubernetes or compose',
          });
        }
      }
    });
  });

/** A non-numeric path segment in any part of a `sentinel://` URL names the master. */
function sentinelMasterInUrl(url: string): boolean {
  return url.split(';').some((part) => /^sentinel:\/\/[^/]*\/(.*\/)?[^/\d][^/]*$/i.test(part.trim()));
}

export type Config = z.infer<typeof configSchema>;
export type SystemConfig = Config['systems'][number];
export type BullmqSystemConfig = Extract<SystemConfig, { type: 'bullmq' }>;
export type CelerySystemConfig = Extract<SystemConfig, { type: 'celery' }>;
export type Role = z.infer<typeof role>;
export type ActionName = keyof Config['policies'];
export type EscalationConfig = Config['escalation'];
export type EscalationRule = EscalationConfig['rules'][number];
export type RuleMetric = EscalationRule['metric'];
export type WorkerGroupConfig = z.infer<typeof workerGroup>;
export type KubernetesGroupConfig = z.infer<typeof kubernetesGroup>;
export type ComposeGroupConfig = z.infer<typeof composeGroup>;
export type CeleryPoolGroupConfig = z.infer<typeof celeryPoolGroup>;
