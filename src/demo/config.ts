import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DemoPlan } from './plan.js';

/** A YAML double-quoted scalar that `${…}` interpolation leaves alone. */
function yamlString(value: string): string {
  return JSON.stringify(value).replace(/\$\{/g, '$${');
}

/**
 * The demo's `queue-ops.yml`: both systems on the demo's Redis database, a SQLite store in the
 * demo's temp directory, U0ALICE an operator and U0BOB an admin. Mode 0600: it holds the Redis URL
 * as given, password included, so that the CLI can be pointed at it.
 */
export function writeDemoConfig(dir: string, redisUrl: string, plan: DemoPlan): string {
  const path = join(dir, 'queue-ops.yml');
  const url = yamlString(redisUrl);
  const list = (names: string[]) => `[${names.map(yamlString).join(', ')}]`;
  const text = [
    '# Written by `npm run demo`; deleted when the demo exits.',
    `store: ${yamlString(`sqlite:${join(dir, 'queue-ops.db')}`)}`,
    'roles:',
    '  viewer: ["*"]',
    '  operator: [U0ALICE]',
    '  admin: [U0BOB]',
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
