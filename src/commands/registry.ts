import { ErrorCode, OpsError } from '../errors.js';
import { suggest } from '../lib/suggest.js';
import type { CommandDefinition, CommandRegistry } from '../pipeline/types.js';
import { VERB_LIST, VERBS, type VerbFacts, type VerbName } from '../verbs.js';
import { createHelpCommand } from './help.js';
import { MODULES as GENERATED_MODULES } from './modules.generated.js';

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
 * How each verb's module is reached when it first runs, generated from the command files
 * (scripts/gen-verbs.js): the compiler asks for a loader for each verb of `VERBS` but `help`,
 * which is built over the registry instead (`createReadCommands`).
 */
const MODULES: { readonly [V in Exclude<VerbName, 'help'>]: () => Promise<CommandDefinition> } =
  GENERATED_MODULES;

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
