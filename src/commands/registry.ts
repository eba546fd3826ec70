import { ErrorCode, OpsError } from '../errors.js';
import { suggest } from '../lib/suggest.js';
import type { CommandDefinition, CommandRegistry } from '../pipeline/types.js';
import { createHelpCommand } from './help.js';
import { VERBS, type VerbFacts } from './verbs.js';

// Each verb's module, imported when the verb first runs (see `lazyVerb`).
const loadAlerts = () => import('./alerts.js');
const loadAudit = () => import('./audit.js');
const loadDlq = () => import('./dlq.js');
const loadExpireResults = () => import('./expire-results.js');
const loadJob = () => import('./job.js');
const loadLimits = () => import('./limits.js');
const loadPause = () => import('./pause.js');
const loadPurge = () => import('./purge.js');
const loadRedis = () => import('./redis.js');
const loadRequests = () => import('./requests.js');
const loadRestart = () => import('./restart.js');
const loadResults = () => import('./results.js');
const loadRetry = () => import('./retry.js');
const loadRevoke = () => import('./revoke.js');
const loadScale = () => import('./scale.js');
const loadStatus = () => import('./status.js');
const loadStuck = () => import('./stuck.js');
const loadTimeline = () => import('./timeline.js');
const loadTrend = () => import('./trend.js');
const loadWhy = () => import('./why.js');
const loadWorkers = () => import('./workers.js');

/**
 * A verb known by its facts (name, help line, what the guards and approvals decide by), whose
 * module is imported when it first runs: its `run`, or its approved `action`. So a command line
 * that answers `status` never initialises purge, the archive, charts or the approvals' messages,
 * and the registry still lists, describes, guards and routes every verb.
 */
function lazyVerb(facts: VerbFacts, load: () => Promise<CommandDefinition>): CommandDefinition {
  let loading: Promise<CommandDefinition> | undefined;
  const command = () => {
    loading ??= load().catch((error: unknown) => {
      // A module that failed to load (a half-written install) is tried again by the next request.
      loading = undefined;
      throw error;
    });
    return loading;
  };
  const { policy, ...said } = facts;
  return {
    ...said,
    run: async (ctx, args, request) => (await command()).run(ctx, args, request),
    ...(policy
      ? {
          action: {
            name: policy,
            async execute(request, run, deps) {
              const action = (await command()).action;
              if (action?.name !== policy) throw new Error(`${facts.verb} has no action named ${policy}`);
              return await action.execute(request, run, deps);
            },
          },
        }
      : {}),
  };
}

/**
 * Every verb beyond the read path, in the order help lists them: the actions (each runs its own
 * approved requests through `action.execute`), approvals, the audit, alerts and the incident views.
 * A new verb is its command file, its strings, its facts in `verbs.ts`, and one line here.
 */
export const ACTION_COMMANDS: readonly CommandDefinition[] = [
  lazyVerb(VERBS.pause, async () => (await loadPause()).pauseCommand),
  lazyVerb(VERBS.resume, async () => (await loadPause()).resumeCommand),
  lazyVerb(VERBS.retry, async () => (await loadRetry()).retryCommand),
  lazyVerb(VERBS.purge, async () => (await loadPurge()).purgeCommand),
  lazyVerb(VERBS.undo, async () => (await loadPurge()).undoCommand),
  lazyVerb(VERBS.pending, async () => (await loadRequests()).pendingCommand),
  lazyVerb(VERBS.approve, async () => (await loadRequests()).approveCommand),
  lazyVerb(VERBS.deny, async () => (await loadRequests()).denyCommand),
  lazyVerb(VERBS.audit, async () => (await loadAudit()).auditCommand),
  lazyVerb(VERBS.alerts, async () => (await loadAlerts()).alertsCommand),
  lazyVerb(VERBS.ack, async () => (await loadAlerts()).ackCommand),
  lazyVerb(VERBS.snooze, async () => (await loadAlerts()).snoozeCommand),
  lazyVerb(VERBS.silence, async () => (await loadAlerts()).silenceCommand),
  lazyVerb(VERBS.silences, async () => (await loadAlerts()).silencesCommand),
  lazyVerb(VERBS.unsilence, async () => (await loadAlerts()).unsilenceCommand),
  lazyVerb(VERBS.scale, async () => (await loadScale()).scaleCommand),
  lazyVerb(VERBS.restart, async () => (await loadRestart()).restartCommand),
  lazyVerb(VERBS.stuck, async () => (await loadStuck()).stuckCommand),
  lazyVerb(VERBS.revoke, async () => (await loadRevoke()).revokeCommand),
  lazyVerb(VERBS.fail, async () => (await loadRevoke()).failCommand),
  lazyVerb(VERBS['expire-results'], async () => (await loadExpireResults()).expireResultsCommand),
  lazyVerb(VERBS['rate-limit'], async () => (await loadLimits()).rateLimitCommand),
  lazyVerb(VERBS.concurrency, async () => (await loadLimits()).concurrencyCommand),
  lazyVerb(VERBS.timeline, async () => (await loadTimeline()).timelineCommand),
  lazyVerb(VERBS.trend, async () => (await loadTrend()).trendCommand),
  lazyVerb(VERBS.why, async () => (await loadWhy()).whyCommand),
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

/** The read path: what every setup answers, the bot's store or not. */
const READ_COMMANDS: readonly CommandDefinition[] = [
  lazyVerb(VERBS.status, async () => (await loadStatus()).statusCommand),
  lazyVerb(VERBS.dlq, async () => (await loadDlq()).dlqCommand),
  lazyVerb(VERBS.workers, async () => (await loadWorkers()).workersCommand),
  lazyVerb(VERBS.redis, async () => (await loadRedis()).redisCommand),
  lazyVerb(VERBS.results, async () => (await loadResults()).resultsCommand),
  lazyVerb(VERBS.job, async () => (await loadJob()).jobCommand),
];

/** The read path (status, dlq, workers, redis, results, job), then `extra` (actions, approvals, audit), then help. */
export function createReadCommands(extra: readonly CommandDefinition[] = []): CommandRegistry {
  const registry = createCommandRegistry([...READ_COMMANDS, ...extra]);
  registry.register(createHelpCommand(() => registry.all()));
  return registry;
}
