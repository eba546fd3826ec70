import { type HelpVerb, helpMessage } from '../blocks/help.js';
import type { CommandDefinition, Reply, Request } from '../pipeline/types.js';
import { OWN_ANSWERS, SHARED_ANSWERS } from './visibility.js';

/**
 * `help`, also what an empty `/queue` answers. Commands registered later (pause, approve, …)
 * appear through their `describe`, without touching this file.
 */
export function createHelpCommand(commands: () => CommandDefinition[]): CommandDefinition {
  return {
    verb: 'help',
    mutating: false,
    async run(_ctx, _args: string[], request: Request): Promise<Reply> {
      const registered = commands();
      // A command's usage is written as typed (`/queue pause …`, also shown in usage errors);
      // a help line adds `/queue` itself.
      const extra: HelpVerb[] = registered.flatMap((c) => {
        if (!c.describe) return [];
        const { usage, summary } = c.describe(request.locale);
        return [{ verb: c.verb, usage: usage.replace(/^\/queue\s+/, ''), summary }];
      });
      return {
        ok: true,
        message: helpMessage(request.locale, extra, { shared: SHARED_ANSWERS, own: OWN_ANSWERS }),
        data: { verbs: registered.map((c) => c.verb) },
        visibility: 'ephemeral',
      };
    },
  };
}
