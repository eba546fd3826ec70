import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locale } from '../i18n/index.js';
import type { DemoPlan } from './plan.js';

/** A YAML double-quoted scalar that `${…}` interpolation leaves alone. */
function yamlString(value: string): string {
  return JSON.stringify(value).replace(/\$\{/g, '$${');
}

/**
 * The demo's `queue-ops.yml`: both systems on the demo's Redis database, a SQLite store in the
 * demo's temp directory, U0ALICE and U0CAROL operators and U0BOB an admin. Pausing needs one
 * approval, so the two-person flow shows; resuming does not, so a demo can be undone in one step.
 * Mode 0600: it holds the Redis URL as given, password included, so that the CLI can be pointed
 * at it.
 */
export function writeDemoConfig(
  dir: string,
  redisUrl: string,
  plan: DemoPlan,
  locale: Locale = 'en',
): string {
  const path = join(dir, 'queue-ops.yml');
  const url = yamlString(redisUrl);
  const list = (names: string[]) => `[${names.map(yamlString).join(', ')}]`;
  const text = [
    '# Written by `npm run demo`; deleted when the demo exits.',
    `store: ${yamlString(`sqlite:${join(dir, 'queue-ops.db')}`)}`,
    `locale: ${locale}`,
    'roles:',
    '  viewer: ["*"]',
    '  operator: [U0ALICE, U0CAROL]',
    '  admin: [U0BOB]',
    'policies:',
    '  pause: { role: operator, approvals: 1 }',
    '  resume: { role: operator, approvals: 0 }',
    // One person plays every user from one shell; the CLI pointed at the demo must allow that.
    'approvals:',
    '  cliSameOsUser: allow',
    'systems:',
    `  - name: ${plan.pushizo.name}`,
    '    type: bullmq',
    `    redis: ${url}`,
    `    prefix: ${plan.pushizo.prefix}`,
    `    queues: ${list(plan.pushizo.queues.map((q) => q.name))}`,
    `  - name: ${plan.zeus.name}`,
    '    type: celery',
    `    redis: ${url}`,
    `    resultBackend: ${url}`,
    `    queues: ${list(plan.zeus.queues.map((q) => q.name))}`,
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}
