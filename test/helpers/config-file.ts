import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ConfigInput } from '../../src/config/schema.js';

/**
 * A config file's text from a typed object: tsc refuses a key the schema does not have or a value
 * of the wrong type, which a list of YAML lines let through until the test ran. Written as YAML
 * (the form users write), so the loader, `${ENV}` and all, reads it as it reads theirs.
 */
export function configYaml(config: ConfigInput): string {
  return stringify(config, { lineWidth: 0 });
}

/** Writes `config` as `queue-ops.yml` (or `name`) in `dir`, private to the user as real ones are. */
export function writeConfigFile(dir: string, config: ConfigInput, name = 'queue-ops.yml'): string {
  const path = join(dir, name);
  writeFileSync(path, configYaml(config), { mode: 0o600 });
  return path;
}

/** The roles most command-line tests play: Alice and Carol operate, Bob administers. */
export const TEST_ROLES = {
  viewer: ['*'],
  operator: ['U0ALICE', 'U0CAROL'],
  admin: ['U0BOB'],
} satisfies ConfigInput['roles'];

/** One entry of `systems:` as a config file writes it. */
export type SystemInput = ConfigInput['systems'][number];
type BullmqSystemInput = Extract<SystemInput, { type: 'bullmq' }>;
type CelerySystemInput = Extract<SystemInput, { type: 'celery' }>;

/** A BullMQ system `name` on the Redis at `redis`, its keys under `prefix`; `more` sets the rest (queues…). */
export function bullmqSystem(
  name: string,
  redis: string,
  prefix: string,
  more: Omit<BullmqSystemInput, 'name' | 'type' | 'redis' | 'prefix'> = {},
): BullmqSystemInput {
  return { name, type: 'bullmq', redis, prefix, ...more };
}

/** A Celery system `name` whose broker is `redis`, watching `queues`; `more` sets the rest (inspectTimeoutMs…). */
export function celerySystem(
  name: string,
  redis: string,
  queues: NonNullable<CelerySystemInput['queues']>,
  more: Omit<CelerySystemInput, 'name' | 'type' | 'redis' | 'queues'> = {},
): CelerySystemInput {
  return { name, type: 'celery', redis, queues, ...more };
}
