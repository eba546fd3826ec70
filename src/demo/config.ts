import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locale } from '../i18n/index.js';
import type { DemoPlan } from './plan.js';

/** A YAML double-quoted scalar that `${…}` interpolation leaves alone. */
function yamlString(value: string): string {
  return JSON.stringify(value).replace(/\$\{/g, '$${');
}

/** Who the demo's people are; the banner and the console help name them from here. */
export const DEMO_PEOPLE = { operator: 'U0ALICE', admins: ['U0BOB', 'U0CAROL'] } as const;

/** The demo's worker groups (`scale <system>/<group> <n>`). */
export const DEMO_GROUPS = {
  /** A Compose service, scaled through the stand-in `docker` on the demo's PATH. */
  compose: { system: 'pushizo', group: 'dispatch', project: 'pushizo', service: 'worker-dispatch' },
  /** The pool of the demo's real Celery worker, resized over pidbox. */
  pool: { system: 'zeus', group: 'pool' },
} as const;

const RUNBOOK = 'https://runbooks.pushizo.example/queue-backlog';
const DASHBOARD = 'https://grafana.pushizo.example/d/pushizo-queues';

/**
 * Who owns Pushizo's queues and what to do about them: the Pushizo runbook's table ("Kuyruk |
 * Normal neden | Tipik çözüm"), one entry per row, `dispatch-*` as the runbook writes it. The
 * owners are user groups; the links are the runbook's sections and the queue dashboard.
 */
export const DEMO_QUEUE_CONTEXT = [
  {
    name: 'audience',
    owner: 'S0PUSHCORE',
    runbook: `${RUNBOOK}#audience`,
    dashboard: `${DASHBOARD}?var-queue=audience`,
    notes: '1M+ abonelik kampanyası, eşzamanlılık 2 → bekle; `worker-dispatch` replikası artır',
  },
  {
    name: 'dispatch-*',
    owner: 'S0PUSHDELIVERY',
    runbook: 'https://runbooks.pushizo.example/provider-outage',
    dashboard: `${DASHBOARD}?var-queue=dispatch`,
    notes:
      'büyük kampanya (200 teslimat/batch), sağlayıcı yavaş/rate limit (`delayed` artar) → `provider-outage.md`; `WORKER_CONCURRENCY` ve replika artır',
  },
  {
    name: 'events',
    owner: 'S0PUSHCORE',
    runbook: `${RUNBOOK}#events`,
    dashboard: `${DASHBOARD}?var-queue=events`,
    notes:
      'SDK/API olay patlaması (10k olay/sn hedefi) → `worker-system` replikası artır; `events` kuyruğunu ayrı servise al',
  },
  {
    name: 'webhooks',
    owner: 'S0WEBHOOKS',
    runbook: `${RUNBOOK}#webhooks`,
    dashboard: `${DASHBOARD}?var-queue=webhooks`,
    notes: "müşteri endpoint'i yavaş (10 sn timeout, 1 eşzamanlı) → endpoint sağlığı; `WEBHOOK_TIMEOUT_MS`",
  },
  {
    name: 'journeys',
    owner: 'S0PUSHCORE',
    runbook: `${RUNBOOK}#journeys`,
    notes: 'bekleme düğümleri aynı anda doluyor → replika artır',
  },
  {
    name: 'maintenance',
    owner: 'S0PUSHCORE',
    runbook: `${RUNBOOK}#maintenance`,
    dashboard: `${DASHBOARD}?var-queue=maintenance`,
    notes:
      'retention/rollup uzun sürüyor → tek eşzamanlı; iş süresine bak (`queue_job_duration_seconds{queue="maintenance"}`)',
  },
] as const;

/** A `queues` entry in YAML's flow style: a plain name, or the name with its context. */
function queueEntryYaml(entry: { name: string } & Record<string, string>): string {
  const fields = Object.entries(entry).map(([key, value]) => `${key}: ${yamlString(value)}`);
  return `{ ${fields.join(', ')} }`;
}

/** How often the demo's own monitor samples: often enough that a change shows within seconds. */
export const DEMO_MONITOR_SECONDS = 5;

/**
 * The demo's `queue-ops.yml`: both systems on the demo's Redis database, a SQLite store and the
 * purge archive in the demo's temp directory, U0ALICE an operator and U0BOB and U0CAROL admins.
 * Pausing, scaling and restarting need one approval by a second person, purging and undoing one by the other
 * admin, so every two-person flow can be played; resuming does not, so a demo pause can be undone
 * in one step. Each system has a worker group. Mode 0600: it holds the Redis URL as given,
 * password included, so that the CLI can be pointed at it.
 */
export function writeDemoConfig(
  dir: string,
  redisUrl: string,
  plan: DemoPlan,
  locale: Locale = 'en',
): string {
  const path = join(dir, 'queue-ops.yml');
  const url = yamlString(redisUrl);
  const list = (names: readonly string[]) => `[${names.map(yamlString).join(', ')}]`;
  const { compose, pool } = DEMO_GROUPS;
  const text = [
    '# Written by `npm run demo`; deleted when the demo exits.',
    `store: ${yamlString(`sqlite:${join(dir, 'queue-ops.db')}`)}`,
    `locale: ${locale}`,
    'roles:',
    '  viewer: ["*"]',
    `  operator: ${list([DEMO_PEOPLE.operator])}`,
    `  admin: ${list(DEMO_PEOPLE.admins)}`,
    'policies:',
    '  pause: { role: operator, approvals: 1 }',
    '  resume: { role: operator, approvals: 0 }',
    '  scale: { role: operator, approvals: 1 }',
    '  restart: { role: operator, approvals: 1 }',
    '  purge: { role: admin, approvals: 1 }',
    '  undo: { role: admin, approvals: 1 }',
    // One person plays every user from one shell; the CLI pointed at the demo must allow that.
    'approvals:',
    '  cliSameOsUser: allow',
    // Purged jobs are archived here, not in the clone's ./data/archive.
    'archive:',
    `  dir: ${yamlString(join(dir, 'archive'))}`,
    'escalation:',
    `  intervalSeconds: ${DEMO_MONITOR_SECONDS}`,
    'systems:',
    `  - name: ${plan.pushizo.name}`,
    '    type: bullmq',
    `    redis: ${url}`,
    `    prefix: ${plan.pushizo.prefix}`,
    // Every queue by name, then the runbook's rows; `dispatch-*` covers the dispatch queues.
    '    queues:',
    ...plan.pushizo.queues.map((q) => {
      const row = DEMO_QUEUE_CONTEXT.find((c) => c.name === q.name);
      return `      - ${row ? queueEntryYaml(row) : yamlString(q.name)}`;
    }),
    ...DEMO_QUEUE_CONTEXT.filter((c) => c.name.includes('*')).map((c) => `      - ${queueEntryYaml(c)}`),
    '    workers:',
    `      ${compose.group}: { type: compose, project: ${compose.project}, file: ${yamlString(join(dir, 'docker-compose.yml'))}, service: ${compose.service}, min: 0, max: 8, workerNames: [] }`,
    `  - name: ${plan.zeus.name}`,
    '    type: celery',
    `    redis: ${url}`,
    `    resultBackend: ${url}`,
    `    queues: ${list(plan.zeus.queues.map((q) => q.name))}`,
    '    workers:',
    `      ${pool.group}: { type: celery-pool, min: 1, max: 8, restartTimeoutSeconds: 20 }`,
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}
