import { type HelpVerb, helpMessage } from '../blocks/help.js';
import type { CommandDefinition, Reply, Request } from '../pipeline/types.js';
import { type VerbFacts, verbsWhere } from '../verbs.js';

// Built by the registry over every other verb (`createHelpCommand`), not loaded.
export const helpFacts = { verb: 'help', order: 340, mutating: false, answer: 'own' } satisfies VerbFacts;

/**
 * `help`, also what an empty `/queue` answers. Commands registered later (pause, approve, …)
 * appear through their `describe`, without touching this file; which answers the channel sees
 * and which only the asker does comes from each verb's descriptor (`answer`).
 */
export function createHelpCommand(facts: VerbFacts, commands: () => CommandDefinition[]): CommandDefinition {
  return {
    ...facts,
    async run(_ctx, _args: string[], request: Request): Promise<Reply> {
      const registered = commands();
      const known = new Set(registered.map((c) => c.verb));
      // A command's usage is written as typed (`/queue pause …`, also shown in usage errors);
      // a help line adds `/queue` itself.
      const extra: HelpVerb[] = registered.flatMap((c) => {
        if (!c.describe) return [];
        const { usage, summary } = c.describe(request.locale);
        return [{ verb: c.verb, usage: usage.replace(/^\/queue\s+/, ''), summary }];
      });
      const answers = {
        shared: verbsWhere((v) => v.answer === 'shared' && known.has(v.verb)),
        own: verbsWhere((v) => v.answer === 'own' && known.has(v.verb)),
      };
      return {
        ok: true,
        message: helpMessage(request.locale, extra, answers),
        data: { verbs: registered.map((c) => c.verb) },
        visibility: 'ephemeral',
      };
    },
  };
}
