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

/**
 * `${NAME}` as a config file writes it, for the loader to fill from the environment (written as
 * a plain string, a linter would take it for a mistaken template). `inner` may carry a default:
 * `NAME:-value`.
 */
export const envRef = (inner: string): string => `$\{${inner}}`;

/** The roles most command-line tests play: Alice and Carol operate, Bob administers. */
export const TEST_ROLES = {
  viewer: ['*'],
  operator: ['U0ALICE', 'U0CAROL'],
  admin: ['U0BOB'],
} satisfies ConfigInput['roles'];

/** One entry of `systems:` as a config file writes it. */
export type SystemInput = ConfigInput['systems'][number];
/** A BullMQ system as a config file writes it. */
export type BullmqSystemInput = Extract<SystemInput, { type: 'bullmq' }>;
/** A Celery system as a config file writes it. */
export type CelerySystemInput = Extract<SystemInput, { type: 'celery' }>;

/**
 * The system most tests watch: BullMQ at `redis`, its keys under `prefix` (BullMQ's own `bull`
 * when not given), with anything else a test needs (`queues`, `workers`, its Slack channel) in `more`.
 */
export function bullmqSystem(
  name: string,
  redis: string,
  prefix?: string,
  more: Omit<BullmqSystemInput, 'name' | 'type' | 'redis' | 'prefix'> = {},
): BullmqSystemInput {
  return { name, type: 'bullmq', redis, ...(prefix === undefined ? {} : { prefix }), ...more };
}

/** A Celery system whose broker is `redis`; `more` adds queues, a result backend, timeouts. */
export function celerySystem(
  name: string,
  redis: string,
  more: Omit<CelerySystemInput, 'name' | 'type' | 'redis'> = {},
): CelerySystemInput {
  return { name, type: 'celery', redis, ...more };
}

/** One of `escalation.rules` as a config file writes it. */
export type RuleInput = NonNullable<NonNullable<ConfigInput['escalation']>['rules']>[number];

/** The rule most alert tests fire: `backlog`, critical over 50 jobs waiting (in `queues`, when given). */
export function backlogRule(queues?: string[]): RuleInput {
  return {
    name: 'backlog',
    ...(queues ? { queues } : {}),
    metric: 'waiting',
    above: 50,
    severity: 'critical',
  };
}
