import { ErrorCode, OpsError } from '../errors.js';
import { suggest } from '../lib/suggest.js';
import type { CommandDefinition, CommandRegistry } from '../pipeline/types.js';
import {
  ackCommand,
  alertsCommand,
  silenceCommand,
  silencesCommand,
  snoozeCommand,
  unsilenceCommand,
} from './alerts.js';
import { auditCommand } from './audit.js';
import { dlqCommand } from './dlq.js';
import { expireResultsCommand } from './expire-results.js';
import { createHelpCommand } from './help.js';
import { jobCommand } from './job.js';
import { concurrencyCommand, rateLimitCommand } from './limits.js';
import { pauseCommand, resumeCommand } from './pause.js';
import { purgeCommand, undoCommand } from './purge.js';
import { redisCommand } from './redis.js';
import { approveCommand, denyCommand, pendingCommand } from './requests.js';
import { restartCommand } from './restart.js';
import { resultsCommand } from './results.js';
import { retryCommand } from './retry.js';
import { failCommand, revokeCommand } from './revoke.js';
import { scaleCommand } from './scale.js';
import { statusCommand } from './status.js';
import { stuckCommand } from './stuck.js';
import { timelineCommand } from './timeline.js';
import { trendCommand } from './trend.js';
import { workersCommand } from './workers.js';

/**
 * Every verb beyond the read path, in the order help lists them: the actions (each runs its own
 * approved requests through `action.execute`), approvals, the audit, alerts and the incident views.
 * A new verb is its command file, its strings, and one line here.
 */
export const ACTION_COMMANDS: readonly CommandDefinition[] = [
  pauseCommand,
  resumeCommand,
  retryCommand,
  purgeCommand,
  undoCommand,
  pendingCommand,
  approveCommand,
  denyCommand,
  auditCommand,
  alertsCommand,
  ackCommand,
  snoozeCommand,
  silenceCommand,
  silencesCommand,
  unsilenceCommand,
  scaleCommand,
  restartCommand,
  stuckCommand,
  revokeCommand,
  failCommand,
  expireResultsCommand,
  rateLimitCommand,
  concurrencyCommand,
  timelineCommand,
  trendCommand,
];

/**
 * Words people type for a verb that is called something else: `verify` is `audit verify`,
 * `waiting` (requests waiting for approval) is `pending`. Only suggested, never run.
 */
const VERB_ALIASES: Record<string, string> = {
  verify: 'audit verify',
  waiting: 'pending',
  requests: 'pending',
};

/** The verb (or alias's command) a mistyped verb most likely was. */
export function suggestVerb(verb: string, verbs: readonly string[]): string | undefined {
  const aliases = Object.keys(VERB_ALIASES).filter((a) => !verbs.includes(a));
  const hit = suggest(verb, [...verbs, ...aliases]);
  if (hit === undefined) return undefined;
  return Object.hasOwn(VERB_ALIASES, hit) ? VERB_ALIASES[hit] : hit;
}

export function createCommandRegistry(commands: CommandDefinition[] = []): CommandRegistry {
  const byVerb = new Map<string, CommandDefinition>();
  const registry: CommandRegistry = {
    resolve(verb) {
      const command = byVerb.get(verb.toLowerCase());
      if (command) return command;
      const valid = [...byVerb.keys()];
      throw new OpsError(ErrorCode.UnknownVerb, { verb, valid, suggestion: suggestVerb(verb, valid) });
    },
    get: (verb) => byVerb.get(verb.toLowerCase()),
    verbs: () => [...byVerb.keys()],
    all: () => [...byVerb.values()],
    register(command) {
      const verb = command.verb.toLowerCase();
      if (byVerb.has(verb)) throw new Error(`command "${verb}" is registered twice`);
      byVerb.set(verb, command);
    },
  };
  for (const command of commands) registry.register(command);
  return registry;
}

/** The read path (status, dlq, workers, redis, results, job), then `extra` (actions, approvals, audit), then help. */
export function createReadCommands(extra: readonly CommandDefinition[] = []): CommandRegistry {
  const registry = createCommandRegistry([
    statusCommand,
    dlqCommand,
    workersCommand,
    redisCommand,
    resultsCommand,
    jobCommand,
    ...extra,
  ]);
  registry.register(createHelpCommand(() => registry.all()));
  return registry;
}
