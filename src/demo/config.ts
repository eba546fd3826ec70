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
    `    queues: ${list(plan.pushizo.queues.map((q) => q.name))}`,
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
