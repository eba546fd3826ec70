// zod's tree-shakable build: the command line validates its config on every run, and the
// chained build costs about as much to load as the rest of the answer. The checks, the
// issues and their messages are the same core's; only the way a schema is written differs
// (`z.optional(x)` for `x.optional()`, `.check(z.minimum(0))` for `.min(0)`).
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { config as englishProblems } from '../i18n/en/config.js';
import { LOCALE_IDS } from '../i18n/locales.js';
import { buildAccessSchemas } from './access.js';
import { buildEscalationSchema } from './escalation.js';
import { buildPagerSchema, pagerIssues } from './paging.js';
import { buildConfigParts, intIn, nonEmpty } from './parts.js';
import type { ConfigProblems } from './problems.js';
import { buildSystemSchema, systemIssues } from './systems/index.js';

export { DEFAULT_ESCALATION_RULES, QUEUE_METRICS, SYSTEM_METRICS } from './escalation.js';
export type { ConfigProblems } from './problems.js';

// The chained build installs the English messages when it loads; this one leaves it to us.
z.config(en());

/**
 * The config schema, its problems worded by `p`: built once per locale (`configSchemaFor`), so a
 * config with `locale: tr` is refused in Turkish. The checks are the same in every locale. Its
 * parts are built in their own files: the systems (one file per kind, `systems/`), who may do what
 * (`access.ts`), the monitor's escalation (`escalation.ts`) and the pagers (`paging.ts`).
 */
function buildConfigSchema(p: ConfigProblems) {
  const parts = buildConfigParts(p);
  const { roles, policies, cli } = buildAccessSchemas(p, parts);

  const configSchema = z
    .strictObject({
      slack: z.prefault(
        z.strictObject({
          incidentChannel: z.optional(parts.slackChannelId()),
          auditChannel: z.optional(parts.slackChannelId()),
          allowedChannels: z._default(z.array(parts.slackChannelId()), []),
        }),
        {},
      ),
      store: z._default(
        z.string().check(z.regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, { error: p.storeUrl })),
        'sqlite:./data/queue-ops.db',
      ),
      roles,
      policies,
      /** Where purged jobs are written before they leave Redis, and how long they are kept. */
      archive: z.prefault(
        z.strictObject({
          dir: z._default(nonEmpty(), './data/archive'),
          retentionDays: z._default(intIn(1, 3650), 7),
        }),
        {},
      ),
      approvals: z.prefault(
        z.strictObject({
          ttlMinutes: z._default(intIn(1, 24 * 60), 15),
          require2fa: z._default(z.boolean(), false),
          /**
           * An approval typed on the command line by the OS user (on the same host) who made the
           * request, or gave an earlier approval of it: refused as a self-approval, since `--user` is
           * only a claim. `allow` is for demos and tests that play two people from one shell.
           */
          cliSameOsUser: z._default(z.enum(['allow', 'refuse']), 'refuse'),
        }),
        {},
      ),
      cli,
      audit: z.prefault(
        z.strictObject({
          /** The audit key (HMAC-SHA256), as text; QUEUE_OPS_AUDIT_KEY instead is the same. */
          keyFile: z.optional(nonEmpty()),
          /** Keys that sealed older entries, so they still verify after a rotation. */
          previousKeyFiles: z._default(z.array(nonEmpty()), []),
          /** An append-only JSON-lines file, one line per entry, outside the store. */
          witnessFile: z.optional(nonEmpty()),
        }),
        {},
      ),
      rateLimit: z.prefault(
        z.strictObject({
          /** Mutating commands (pause, approve, deny…) one user may run per minute. */
          perUserPerMinute: z._default(intIn(1, 10_000), 10),
        }),
        {},
      ),
      // Every message, button, error, alert and approval; a Slack user's own tr-TR or en-* overrides it.
      locale: z._default(z.enum(LOCALE_IDS), 'en'),
      metrics: z.prefault(
        z.strictObject({
          /** How long one read of a system serves `/metrics` scrapes. */
          cacheSeconds: z._default(z.number().check(z.minimum(0), z.maximum(300)), 10),
        }),
        {},
      ),
      escalation: z.prefault(buildEscalationSchema(p, parts), {}),
      /** Pagers (PagerDuty, JSM) that page the on-call person for alerts; none by default. */
      paging: z._default(z.array(buildPagerSchema(p)), []),
      /** `why`: what counts as evidence. */
      diagnosis: z.prefault(
        z.strictObject({
          /** Work running this long holds its slot (`stuck-tasks`); also `stuck`'s default. */
          stuckAfterMinutes: z._default(z.number().check(z.minimum(0.01), z.maximum(7 * 24 * 60)), 30),
        }),
        {},
      ),
      systems: z.array(buildSystemSchema(p, parts)).check(z.minLength(1, { error: p.noSystems })),
    })
    .check(
      z.superRefine((config, ctx) => {
        for (const issue of pagerIssues(config.paging, p)) ctx.addIssue({ code: 'custom', ...issue });
      }),
      z.superRefine((config, ctx) => {
        for (const issue of systemIssues(config.systems, p)) ctx.addIssue({ code: 'custom', ...issue });
      }),
    );

  return configSchema;
}

/** The schema with English problems: the one the types come from, and tests parse with. */
export const configSchema = buildConfigSchema(englishProblems);

const schemas = new Map<ConfigProblems, typeof configSchema>([[englishProblems, configSchema]]);

/** The schema that words its problems with `problems` (a locale's catalog part), built once each. */
export function configSchemaFor(problems: ConfigProblems): typeof configSchema {
  let schema = schemas.get(problems);
  if (!schema) {
    schema = buildConfigSchema(problems);
    schemas.set(problems, schema);
  }
  return schema;
}

export type Config = z.infer<typeof configSchema>;
/** What a config file may say, before defaults: the shape a test or a tool writes one in. */
export type ConfigInput = z.input<typeof configSchema>;
export type SystemConfig = Config['systems'][number];
export type BullmqSystemConfig = Extract<SystemConfig, { type: 'bullmq' }>;
export type CelerySystemConfig = Extract<SystemConfig, { type: 'celery' }>;
export type Role = Config['policies']['pause']['role'];
export type ActionName = keyof Config['policies'];
export type EscalationConfig = Config['escalation'];
export type PagerConfig = Config['paging'][number];
export type EscalationRule = EscalationConfig['rules'][number];
export type RuleMetric = EscalationRule['metric'];
export type WorkerGroupConfig = NonNullable<SystemConfig['workers']>[string];
export type KubernetesGroupConfig = Extract<WorkerGroupConfig, { type: 'kubernetes' }>;
export type ComposeGroupConfig = Extract<WorkerGroupConfig, { type: 'compose' }>;
export type CeleryPoolGroupConfig = Extract<WorkerGroupConfig, { type: 'celery-pool' }>;
