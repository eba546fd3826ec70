import { ErrorCode, OpsError } from '../errors.js';
import { suggest } from '../lib/suggest.js';
import type { CommandDefinition, CommandRegistry } from '../pipeline/types.js';
import { VERB_LIST, VERBS, type VerbFacts, type VerbName } from '../verbs.js';
import { createHelpCommand } from './help.js';

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
 * How each verb's module is reached when it first runs, by the name of its descriptor
 * (`src/verbs.ts`): the compiler asks for a line here for each verb there, and this file keeps
 * no other list. `help` is built over the registry instead (`createReadCommands`).
 */
const MODULES: { readonly [V in Exclude<VerbName, 'help'>]: () => Promise<CommandDefinition> } = {
  status: async () => (await loadStatus()).statusCommand,
  dlq: async () => (await loadDlq()).dlqCommand,
  workers: async () => (await loadWorkers()).workersCommand,
  redis: async () => (await loadRedis()).redisCommand,
  results: async () => (await loadResults()).resultsCommand,
  job: async () => (await loadJob()).jobCommand,
  pause: async () => (await loadPause()).pauseCommand,
  resume: async () => (await loadPause()).resumeCommand,
  retry: async () => (await loadRetry()).retryCommand,
  purge: async () => (await loadPurge()).purgeCommand,
  undo: async () => (await loadPurge()).undoCommand,
  pending: async () => (await loadRequests()).pendingCommand,
  approve: async () => (await loadRequests()).approveCommand,
  deny: async () => (await loadRequests()).denyCommand,
  audit: async () => (await loadAudit()).auditCommand,
  alerts: async () => (await loadAlerts()).alertsCommand,
  ack: async () => (await loadAlerts()).ackCommand,
  snooze: async () => (await loadAlerts()).snoozeCommand,
  page: async () => (await loadAlerts()).pageCommand,
  silence: async () => (await loadAlerts()).silenceCommand,
  silences: async () => (await loadAlerts()).silencesCommand,
  unsilence: async () => (await loadAlerts()).unsilenceCommand,
  scale: async () => (await loadScale()).scaleCommand,
  restart: async () => (await loadRestart()).restartCommand,
  stuck: async () => (await loadStuck()).stuckCommand,
  revoke: async () => (await loadRevoke()).revokeCommand,
  fail: async () => (await loadRevoke()).failCommand,
  'expire-results': async () => (await loadExpireResults()).expireResultsCommand,
  'rate-limit': async () => (await loadLimits()).rateLimitCommand,
  concurrency: async () => (await loadLimits()).concurrencyCommand,
  timeline: async () => (await loadTimeline()).timelineCommand,
  trend: async () => (await loadTrend()).trendCommand,
  why: async () => (await loadWhy()).whyCommand,
};

/** Each descriptor with a module, as a lazily loaded command, in the descriptors' order. */
function lazyVerbs(which: (facts: VerbFacts) => boolean): CommandDefinition[] {
  return VERB_LIST.filter((facts) => facts.verb !== 'help' && which(facts)).map((facts) =>
    lazyVerb(facts, MODULES[facts.verb as Exclude<VerbName, 'help'>]),
  );
}

/**
 * Every verb beyond the read path, in the order help lists them: the actions (each runs its own
 * approved requests through `action.execute`), approvals, the audit, alerts and the incident views.
 */
export const ACTION_COMMANDS: readonly CommandDefinition[] = lazyVerbs((facts) => !facts.readPath);

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

/** The read path: what every setup answers, the bot's store or not (`readPath` in its descriptor). */
const READ_COMMANDS: readonly CommandDefinition[] = lazyVerbs((facts) => facts.readPath === true);

/** The read path (status, dlq, workers, redis, results, job), then `extra` (actions, approvals, audit), then help. */
export function createReadCommands(extra: readonly CommandDefinition[] = []): CommandRegistry {
  const registry = createCommandRegistry([...READ_COMMANDS, ...extra]);
  registry.register(createHelpCommand(VERBS.help, () => registry.all()));
  return registry;
}
