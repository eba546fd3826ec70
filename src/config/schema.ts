// zod's tree-shakable build: the command line validates its config on every run, and the
// chained build costs about as much to load as the rest of the answer. The checks, the
// issues and their messages are the same core's; only the way a schema is written differs
// (`z.optional(x)` for `x.optional()`, `.check(z.minimum(0))` for `.min(0)`).
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { config as englishProblems } from '../i18n/en/config.js';
import { LOCALE_IDS } from '../i18n/locales.js';
import { isReadableRedisUrl } from '../lib/redis-url.js';
import { parseDuration } from './duration.js';
import { normalizeQueues, type QueueEntry } from './queue-context.js';

// The chained build installs the English messages when it loads; this one leaves it to us.
z.config(en());

/** How the schema words what it refuses: the catalog's `config` part, in one locale. */
export type ConfigProblems = typeof englishProblems;

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

/**
 * The config schema, its problems worded by `p`: built once per locale (`configSchemaFor`), so a
 * config with `locale: tr` is refused in Turkish. The checks are the same in every locale.
 */
function buildConfigSchema(p: ConfigProblems) {
  /**
   * A URL the Redis client can also read, as it will when it connects (src/lib/redis-url.ts): one
   * that only looks right (a password with `#` in it) would otherwise fail every command later.
   */
  const readable = z.refine<string>(
    (url) => !/^(rediss?|sentinel):\/\//i.test(url) || isReadableRedisUrl(url),
    {
      error: p.unreadableRedisUrl,
    },
  );
  const redisUrl = z
    .string({ error: p.redisUrl })
    .check(z.regex(/^rediss?:\/\/.+/, { error: p.redisUrl }), readable);

  /** Also Celery's Sentinel broker form: `sentinel://h1:26379;sentinel://h2:26379/mymaster`. */
  const watchedRedisUrl = z
    .string({ error: p.watchedRedisUrl })
    .check(z.regex(/^(rediss?|sentinel):\/\/.+/, { error: p.watchedRedisUrl }), readable);

  /** A string of at least one character (`z.string().min(1)`). */
  const nonEmpty = () => z.string().check(z.minLength(1));

  /** An integer in [min, max] (`z.number().int().min(min).max(max)`). */
  const intIn = (min: number, max: number) => z.number().check(z.int(), z.minimum(min), z.maximum(max));

  /** Files for `rediss://`: a private CA, and a client certificate when Redis asks for one. */
  const redisTls = z.strictObject({
    ca: z.optional(nonEmpty()),
    cert: z.optional(nonEmpty()),
    key: z.optional(nonEmpty()),
    /** The host name the server's certificate must carry, when it differs from the URL's. */
    servername: z.optional(nonEmpty()),
  });

  const hostPort = z.string().check(z.regex(/^[^\s:]+:\d{1,5}$/, { error: p.hostPort }));

  /** How a system's Redis is reached beyond its URL: TLS files, Sentinel. */
  const redisShape = {
    redis: watchedRedisUrl,
    tls: z.optional(redisTls),
    /**
     * Sentinel, as ioredis names it: `sentinels` (`host:port` each) and the master's `name`
     * (Celery's `master_name`). Either this, a `sentinel://` URL, or both (the hosts add up).
     */
    sentinel: z.optional(
      z.strictObject({
        sentinels: z.optional(z.array(hostPort).check(z.minLength(1))),
        name: z.optional(nonEmpty()),
      }),
    ),
  };

  const slackChannelId = () => z.string().check(z.regex(/^[CGD][A-Z0-9]+$/, { error: p.slackChannelId }));

  /** A system's own Slack settings: where its alerts go (the incident channel when not set). */
  const systemSlack = z.optional(z.strictObject({ alertChannel: z.optional(slackChannelId()) }));

  /** A queue name as it appears in `system/queue`: no slash, no whitespace. */
  const queueName = z.string().check(z.regex(/^[^\s/]+$/, { error: p.queueName }));

  /** A link shown as a link: only `https:`, and nothing that would end Slack's `<url|label>` early. */
  const httpsUrl = z.string({ error: p.httpsUrl }).check(
    z.refine(
      (text) => {
        if (text.length > 500 || /[\s<>|]/.test(text)) return false;
        try {
          return new URL(text).protocol === 'https:';
        } catch {
          return false;
        }
      },
      { error: p.httpsUrl },
    ),
  );

  /**
   * One `queues` entry: a name (or a `*` pattern), or the same with who owns it and what to do
   * about it. Read into names, patterns and context once, at load (`normalizeQueues`).
   */
  const queueEntry = z.union(
    [
      queueName,
      z.strictObject({
        name: queueName,
        /** A Slack user group (S…) or user (U…/W…). */
        owner: z.optional(
          z.string({ error: p.owner }).check(z.regex(/^[USW][A-Z0-9]+$/, { error: p.owner })),
        ),
        runbook: z.optional(httpsUrl),
        dashboard: z.optional(httpsUrl),
        notes: z.optional(z.string().check(z.minLength(1), z.maxLength(1000))),
      }),
    ],
    { error: (issue) => (issue.code === 'invalid_union' ? p.queueEntry : undefined) },
  );
  const queueEntries = z.optional(z.array(queueEntry).check(z.minLength(1)));

  /** A system with its `queues` normalized: names and patterns for the backends, context for the views. */
  const withQueueContext = <S extends { queues?: (string | QueueEntry)[] | undefined }>(system: S) => {
    const { queues, ...rest } = system;
    return { ...rest, ...normalizeQueues(queues) };
  };

  const systemName = z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: p.name }));

  /** A count of replicas, containers or pool processes. */
  const replicas = intIn(0, 1000);

  /** A Kubernetes object name (RFC 1123 label/subdomain, as `kubectl` accepts). */
  const kubeName = z.string().check(
    z.regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
      error: p.kubernetesName,
    }),
  );

  /**
   * What `restart` checks afterwards, on every kind of group: the worker names that belong to it
   * (`*` matches any run of characters; `[]`: none answer, as for celery beat) and how long it
   * waits for them (and for a Kubernetes rollout) before answering who is back and who is not.
   */
  const restartCheck = {
    workerNames: z.optional(z.array(nonEmpty())),
    restartTimeoutSeconds: z._default(intIn(5, 600), 60),
    /**
     * The queues the group's workers consume: `why` offers `restart`/`scale` of this group for a
     * cause on them (a system of one group needs none).
     */
    queues: z.optional(z.array(nonEmpty()).check(z.minLength(1))),
  };

  const kubernetesGroup = z.strictObject({
    type: z.literal('kubernetes'),
    namespace: kubeName,
    deployment: kubeName,
    min: replicas,
    max: replicas,
    ...restartCheck,
  });

  const composeGroup = z.strictObject({
    type: z.literal('compose'),
    project: nonEmpty(),
    file: nonEmpty(),
    /** `--env-file` of the project, given to every `docker compose` run (scale and restart). */
    envFile: z.optional(nonEmpty()),
    service: nonEmpty(),
    min: replicas,
    max: replicas,
    ...restartCheck,
  });

  const celeryPoolGroup = z.strictObject({
    type: z.literal('celery-pool'),
    min: replicas.check(z.minimum(1)),
    max: replicas.check(z.minimum(1)),
    /**
     * How `restart` restarts the pool's workers: `pool_restart` (workers started with
     * `worker_pool_restarts=True`; a worker without it is shut down instead) or `shutdown` of
     * every worker, for its supervisor to start again.
     */
    restart: z._default(z.enum(['pool_restart', 'shutdown']), 'pool_restart'),
    ...restartCheck,
  });

  const workerGroup = z
    .discriminatedUnion('type', [kubernetesGroup, composeGroup, celeryPoolGroup], {
      error: (issue) =>
        issue.code === 'invalid_union' ? p.workerGroupType : (issue.message ?? p.invalidWorkerGroup),
    })
    .check(z.refine((group) => group.min <= group.max, { error: p.minAboveMax, path: ['max'] }));

  /** `workers:` of a system: group name → how its capacity is changed. */
  const workerGroups = z.record(
    z.string().check(
      z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
        error: p.groupName,
      }),
    ),
    workerGroup,
  );

  const bullmqSystem = z.strictObject({
    name: systemName,
    type: z.literal('bullmq'),
    ...redisShape,
    /**
     * Redis Cluster: `redis` and `nodes` are startup nodes. BullMQ needs a `{hash-tag}` prefix
     * there, so every key of every queue lives in one slot.
     */
    cluster: z.optional(z.boolean()),
    nodes: z.optional(z.array(redisUrl).check(z.minLength(1))),
    prefix: z._default(nonEmpty(), 'bull'),
    queues: queueEntries,
    workers: z.optional(workerGroups),
    slack: systemSlack,
  });

  const celerySystem = z.strictObject({
    name: systemName,
    type: z.literal('celery'),
    ...redisShape,
    resultBackend: z.optional(watchedRedisUrl),
    queues: queueEntries,
    globalKeyprefix: z._default(z.string(), ''),
    /** kombu's `priority_steps` transport option. */
    prioritySteps: z._default(z.array(intIn(0, 255)).check(z.minLength(1)), [0, 3, 6, 9]),
    /** kombu's `sep` transport option. */
    separator: z._default(nonEmpty(), '\x06\x16'),
    /** kombu's `fanout_prefix`: true → `/<db>.`, false → none, a string → itself. */
    fanoutPrefix: z._default(z.union([z.boolean(), z.string()]), true),
    /** How long worker inspection waits for pidbox replies. */
    inspectTimeoutMs: z._default(intIn(50, 10_000), 1000),
    workers: z.optional(workerGroups),
    slack: systemSlack,
  });

  // `queues` is read into names, patterns and context here, once, for every consumer.
  const system = z.discriminatedUnion(
    'type',
    [
      z.pipe(bullmqSystem, z.transform(withQueueContext)),
      z.pipe(celerySystem, z.transform(withQueueContext)),
    ],
    {
      error: (issue) => (issue.code === 'invalid_union' ? p.systemType : (issue.message ?? p.invalidSystem)),
    },
  );

  const principal = z.string({ error: p.principal }).check(
    z.regex(/^(\*|[UWS][A-Z0-9]+)$/, {
      error: p.principal,
    }),
  );

  /** A Slack user id, as `cli.users` binds OS accounts to them (no groups, no `*`). */
  const slackUserId = z.string({ error: p.slackUserId }).check(
    z.regex(/^[UW][A-Z0-9]+$/, {
      error: p.slackUserId,
    }),
  );

  /** An OS account name as the command line reads it (`userInfo().username`): no whitespace. */
  const osAccount = z.string().check(z.regex(/^[^\s:]+$/, { error: p.osAccount }));

  const role = z.enum(['viewer', 'operator', 'admin']);

  const policy = z.strictObject({
    role: role,
    approvals: z._default(intIn(0, 5), 0),
  });
  /**
   * `retry`'s policy: `approvals` for one job, `bulkApprovals` (at least `approvals`) for a retry
   * of more than one (`retry … all`): re-queueing a whole dead-letter list waits for a second person
   * by default.
   */
  const retryPolicy = z.strictObject({
    role: role,
    approvals: z._default(intIn(0, 5), 0),
    bulkApprovals: z._default(intIn(0, 5), 1),
  });

  const duration = z.pipe(
    z.string({ error: p.duration }).check(
      z.refine((text) => parseDuration(text) !== undefined, {
        error: p.duration,
      }),
    ),
    z.transform((text: string) => parseDuration(text) as number),
  );

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

  /**
   * Who a pager pages (`paging[].match`): each list given must contain the alert's value; a pager
   * without `match` pages every alert.
   */
  const pagerMatch = z.strictObject({
    severities: z.optional(z.array(z.enum(['critical', 'warning', 'info']))),
    systems: z.optional(z.array(nonEmpty())),
    rules: z.optional(z.array(nonEmpty())),
  });
  const pagerCommon = {
    name: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, { error: p.pagerName })),
    /** The service's public endpoint unless given (a test points it at a stand-in). */
    url: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: p.pagerUrl }))),
    match: z.optional(pagerMatch),
    /** Pages once the alert has been open this long (from `openedAt`); 0: at once. */
    afterMinutes: z._default(z.number().check(z.minimum(0), z.maximum(7 * 24 * 60)), 0),
  };
  /** A pager (`paging:`), like an Alertmanager receiver: PagerDuty's Events API v2, or JSM's alerts. */
  const pager = z.discriminatedUnion('type', [
    z.strictObject({
      ...pagerCommon,
      type: z.literal('pagerduty'),
      /** The Events v2 integration's routing key, as `${ENV}`. */
      routingKey: nonEmpty(),
    }),
    z.strictObject({
      ...pagerCommon,
      type: z.literal('jsm'),
      /** The JSM (Opsgenie) API integration's key, as `${ENV}`. */
      apiKey: nonEmpty(),
    }),
  ]);

  const configSchema = z
    .strictObject({
      slack: z.prefault(
        z.strictObject({
          incidentChannel: z.optional(slackChannelId()),
          auditChannel: z.optional(slackChannelId()),
          allowedChannels: z._default(z.array(slackChannelId()), []),
        }),
        {},
      ),
      store: z._default(
        z.string().check(z.regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, { error: p.storeUrl })),
        'sqlite:./data/queue-ops.db',
      ),
      roles: z.prefault(
        z.strictObject({
          viewer: z._default(z.array(principal), ['*']),
          operator: z._default(z.array(principal), []),
          admin: z._default(z.array(principal), []),
        }),
        {},
      ),
      policies: z.prefault(
        z.strictObject({
          pause: z._default(policy, { role: 'operator', approvals: 0 }),
          resume: z._default(policy, { role: 'operator', approvals: 0 }),
          retry: z._default(retryPolicy, { role: 'operator', approvals: 0, bulkApprovals: 1 }),
          scale: z._default(policy, { role: 'operator', approvals: 1 }),
          /** Restarting a worker group: as strict as scale unless configured. */
          restart: z._default(policy, { role: 'operator', approvals: 1 }),
          purge: z._default(policy, { role: 'admin', approvals: 1 }),
          revoke: z._default(policy, { role: 'operator', approvals: 0 }),
          fail: z._default(policy, { role: 'operator', approvals: 0 }),
          /** Restoring a purge from its archive: as strict as purge unless configured. */
          undo: z._default(policy, { role: 'admin', approvals: 1 }),
          /** Giving Celery results a TTL: Redis then deletes them, so as strict as purge. */
          'expire-results': z._default(policy, { role: 'admin', approvals: 1 }),
          /** A Celery task's or a BullMQ queue's rate limit: slows every worker, so two people. */
          'rate-limit': z._default(policy, { role: 'operator', approvals: 1 }),
          /** A BullMQ queue's global concurrency. */
          concurrency: z._default(policy, { role: 'operator', approvals: 1 }),
        }),
        {},
      ),
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
      /**
       * The command line: `users` binds OS accounts to the Slack user ids they are. Only a bound
       * `--user` counts against a Slack identity (approving a request asked in Slack, or being
       * approved from Slack); a bound account may not claim an id it is not bound to.
       */
      cli: z.prefault(
        z.strictObject({
          users: z._default(
            z.record(osAccount, z.array(slackUserId).check(z.minLength(1, { error: p.slackUserId })), {
              error: (issue) => (issue.code === 'invalid_key' ? p.osAccount : undefined),
            }),
            {},
          ),
        }),
        {},
      ),
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
      escalation: z.prefault(escalation, {}),
      /** Pagers (PagerDuty, JSM) that page the on-call person for alerts; none by default. */
      paging: z._default(z.array(pager), []),
      /** `why`: what counts as evidence. */
      diagnosis: z.prefault(
        z.strictObject({
          /** Work running this long holds its slot (`stuck-tasks`); also `stuck`'s default. */
          stuckAfterMinutes: z._default(z.number().check(z.minimum(0.01), z.maximum(7 * 24 * 60)), 30),
        }),
        {},
      ),
      systems: z.array(system).check(z.minLength(1, { error: p.noSystems })),
    })
    .check(
      z.superRefine((config, ctx) => {
        const pagers = new Map<string, number>();
        config.paging.forEach((pager, index) => {
          const first = pagers.get(pager.name);
          if (first !== undefined)
            ctx.addIssue({
              code: 'custom',
              path: ['paging', index, 'name'],
              message: p.duplicatePager(pager.name, `paging[${first}]`),
            });
          else pagers.set(pager.name, index);
        });
      }),
      z.superRefine((config, ctx) => {
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
              message: p.sentinelName,
            });
          }
          if (s.type === 'bullmq' && s.cluster && !/^\{[^}]+\}$/.test(s.prefix)) {
            ctx.addIssue({
              code: 'custom',
              path: ['systems', index, 'prefix'],
              message: p.clusterPrefix(s.prefix),
            });
          }
          if (s.sentinel && !sentinelUrl && !s.sentinel.sentinels) {
            ctx.addIssue({
              code: 'custom',
              path: ['systems', index, 'sentinel', 'sentinels'],
              message: p.sentinels,
            });
          }
          const first = seen.get(s.name);
          if (first !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['systems', index, 'name'],
              message: p.duplicateSystem(s.name, `systems[${first}]`),
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
                message: p.celeryPoolOnBullmq,
              });
            }
          }
        });
      }),
    );

  return configSchema;
}

/** A non-numeric path segment in any part of a `sentinel://` URL names the master. */
function sentinelMasterInUrl(url: string): boolean {
  return url.split(';').some((part) => /^sentinel:\/\/[^/]*\/(.*\/)?[^/\d][^/]*$/i.test(part.trim()));
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
