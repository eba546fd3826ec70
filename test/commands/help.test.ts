import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/blocks/render-text.js';
import { pauseCommand, resumeCommand } from '../../src/commands/pause.js';
import { ACTION_COMMANDS, createReadCommands } from '../../src/commands/registry.js';
import { approveCommand, denyCommand, pendingCommand } from '../../src/commands/requests.js';
import { retryCommand } from '../../src/commands/retry.js';
import type { CommandContext } from '../../src/pipeline/types.js';

describe('/queue help with the action verbs registered', () => {
  it('shows each usage once after /queue, the actions after the read verbs and help itself last', async () => {
    const registry = createReadCommands([
      pauseCommand,
      resumeCommand,
      retryCommand,
      pendingCommand,
      approveCommand,
      denyCommand,
    ]);
    const reply = await registry
      .resolve('help')
      .run({} as CommandContext, [], { actor: { id: 'U0ALICE' }, via: 'cli', words: ['help'], locale: 'en' });
    const text = renderText(reply.message).text;
    expect(text).not.toContain('/queue /queue');
    const order = [
      'status',
      'dlq',
      'workers',
      'pause',
      'resume',
      'retry',
      'pending',
      'approve',
      'deny',
      'help',
    ].map((verb) => text.indexOf(`\`/queue ${verb}`));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});

describe("help's footer, from each verb's descriptor", () => {
  it('names every answer the channel sees (redis, results and job included) and every one only the asker sees', async () => {
    const registry = createReadCommands(ACTION_COMMANDS);
    const reply = await registry
      .resolve('help')
      .run({} as CommandContext, [], { actor: { id: 'U0ALICE' }, via: 'cli', words: ['help'], locale: 'en' });
    expect(renderText(reply.message).text).toContain(
      'Everyone in the channel sees: status, dlq, workers, redis, results, job, alerts, stuck, trend, why. Only you see: pending, audit, timeline, help, errors and refusals.',
    );
  });
});
