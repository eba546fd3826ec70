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

const bullmqSystem = z
  .object({
    name: systemName,
    type: z.literal('bullmq'),
    redis: redisUrl,
    prefix: z.string().min(1).default('bull'),
    queues: z.array(queueName).min(1).optional(),
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
    });
  });

export type Config = z.infer<typeof configSchema>;
export type SystemConfig = Config['systems'][number];
export type BullmqSystemConfig = Extract<SystemConfig, { type: 'bullmq' }>;
export type CelerySystemConfig = Extract<SystemConfig, { type: 'celery' }>;
export type Role = z.infer<typeof role>;
export type ActionName = keyof Config['policies'];
