import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACTION_COMMANDS, createReadCommands } from '../../src/commands/registry.js';
import { LOCALE_IDS } from '../../src/i18n/locales.js';
import type { CommandDefinition } from '../../src/pipeline/types.js';
import { VERBS, type VerbFacts } from '../../src/verbs.js';

const COMMANDS = join(import.meta.dirname, '../../src/commands');

/** Every command definition the verb modules export, loaded as the registry loads them. */
async function definitions(): Promise<CommandDefinition[]> {
  const found: CommandDefinition[] = [];
  for (const file of readdirSync(COMMANDS).filter((name) => name.endsWith('.ts'))) {
    const module = (await import(join(COMMANDS, file))) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      const command = value as Partial<CommandDefinition> | undefined;
      if (command && typeof command === 'object' && typeof command.verb === 'string' && command.run)
        found.push(command as CommandDefinition);
    }
  }
  return found;
}

/**
 * What a descriptor says, its functions by what they answer in every locale: the command's own
 * descriptor and the generated copy of it (src/verbs.generated.ts) are two functions of one text.
 */
function said(facts: Partial<VerbFacts>) {
  return {
    mutating: facts.mutating,
    rateLimited: facts.rateLimited,
    describe: LOCALE_IDS.map((locale) => facts.describe?.(locale)),
    progress: LOCALE_IDS.map((locale) => facts.progress?.(locale)),
  };
}

describe('verbs are registered by their facts and loaded when they run', () => {
  it("every verb's module says what the registry answers help, the guards and the approvals with", async () => {
    const loaded = await definitions();
    for (const command of loaded) {
      const facts = VERBS[command.verb as keyof typeof VERBS] as VerbFacts;
      expect(facts, command.verb).toBeDefined();
      expect({ ...said(command as Partial<VerbFacts>), action: command.action?.name }, command.verb).toEqual({
        ...said(facts),
        action: facts.policy,
      });
    }
    // Each verb with facts has its module, and the registry lists every one of them, help last.
    // (`help` alone is built over the registry rather than loaded.)
    expect(loaded.map((c) => c.verb).sort()).toEqual(
      Object.keys(VERBS)
        .filter((v) => v !== 'help')
        .sort(),
    );
    expect(createReadCommands(ACTION_COMMANDS).verbs()).toEqual(Object.keys(VERBS));
  });

  it('the approvals know every action by its policy before any verb module is loaded', async () => {
    const registry = createReadCommands(ACTION_COMMANDS);
    const executors = registry.all().flatMap((c) => (c.action ? [c.action.name] : []));
    expect(executors.sort()).toEqual(
      Object.values(VERBS as Record<string, VerbFacts>)
        .flatMap((facts) => (facts.policy ? [facts.policy] : []))
        .sort(),
    );
  });
});

describe('the descriptors say one coherent thing per verb', () => {
  const all = Object.values(VERBS as Record<string, VerbFacts>);

  it('a policy or a fixed requirement only on a verb that changes something, never both', () => {
    expect(all.filter((v) => (v.policy || v.requires) && !v.mutating).map((v) => v.verb)).toEqual([]);
    expect(all.filter((v) => v.policy && v.requires).map((v) => v.verb)).toEqual([]);
  });

  it('only reads have an answer for everyone or are looks; only mutating ones confirm or show progress', () => {
    expect(all.filter((v) => v.mutating && (v.answer || v.timeline === 'look')).map((v) => v.verb)).toEqual(
      [],
    );
    expect(all.filter((v) => !v.policy && (v.destructive || v.progress)).map((v) => v.verb)).toEqual([]);
    expect(all.filter((v) => v.readPath && v.mutating).map((v) => v.verb)).toEqual([]);
  });

  it('each descriptor is filed under its own verb', () => {
    for (const [key, facts] of Object.entries(VERBS)) expect(facts.verb).toBe(key);
  });
});
