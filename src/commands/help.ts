import { type HelpVerb, helpMessage } from '../blocks/help.js';
import type { CommandDefinition, Reply, Request } from './types.js';

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
      const extra: HelpVerb[] = registered.flatMap((c) =>
        c.describe ? [{ verb: c.verb, ...c.describe(request.locale) }] : [],
      );
      return {
        ok: true,
        message: helpMessage(request.locale, extra),
        data: { verbs: registered.map((c) => c.verb) },
        visibility: 'ephemeral',
      };
    },
  };
}
