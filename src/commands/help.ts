import { helpMessage } from '../blocks/help.js';
import type { CommandDefinition, Reply, Request } from './types.js';

/**
 * `help`, also what an empty `/queue` answers. Lists the verbs the registry actually has, so
 * that actions added later appear without touching this file.
 */
export function createHelpCommand(verbs: () => string[]): CommandDefinition {
  return {
    verb: 'help',
    mutating: false,
    async run(_ctx, _args: string[], request: Request): Promise<Reply> {
      const available = verbs();
      return {
        ok: true,
        message: helpMessage(request.locale, available),
        data: { verbs: available },
        visibility: 'ephemeral',
      };
    },
  };
}
