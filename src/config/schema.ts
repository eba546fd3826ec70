import { z } from 'zod';

const redisUrl = z
  .string({ error: 'expected a redis:// or rediss:// URL' })
  .regex(/^rediss?:\/\/.+/, { error: 'expected a redis:// or rediss:// URL' });

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
    redis: redisUrl,
    prefix: z.string().min(1).default('bull'),
    queues: z.array(queueName).min(1).optional(),
    workers: workerGroups.optional(),
  })
  .strict();

const celerySystem = z
  .object({
    name: systemName,
    type: z.literal('celery'),
    redis: redisUrl,
    resultBackend: redisUrl.optional(),
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
      }),
    approvals: z
      .object({
        ttlMinutes: z
          .number()
          .int()
          .min(1)
          .max(24 * 60)
          .default(15),
        require2fa: z.boolean().default(false),
      })
      .strict()
      .default({ ttlMinutes: 15, require2fa: false }),
    locale: z.enum(['en']).default('en'),
    systems: z.array(system).min(1, { error: 'expected at least one system' }),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.systems.forEach((s, index) => {
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

export type Config = z.infer<typeof configSchema>;
export type SystemConfig = Config['systems'][number];
export type BullmqSystemConfig = Extract<SystemConfig, { type: 'bullmq' }>;
export type CelerySystemConfig = Extract<SystemConfig, { type: 'celery' }>;
export type Role = z.infer<typeof role>;
export type ActionName = keyof Config['policies'];
export type WorkerGroupConfig = z.infer<typeof workerGroup>;
export type KubernetesGroupConfig = z.infer<typeof kubernetesGroup>;
export type ComposeGroupConfig = z.infer<typeof composeGroup>;
export type CeleryPoolGroupConfig = z.infer<typeof celeryPoolGroup>;
