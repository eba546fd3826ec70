import type { VerbFacts } from './verbs/facts.js';
import { VERBS } from './verbs.generated.js';

export type { ResultReport, VerbFacts } from './verbs/facts.js';
export type { ActionResult, OutcomeRequest, OutcomeWording, TimelineWording } from './verbs/wording.js';

/**
 * Every verb's descriptor, by its name, in help's order: written beside each verb's command
 * (`src/commands/*.ts`) and gathered into `src/verbs.generated.ts` by scripts/gen-verbs.js
 * (`npm run gen:verbs`; the build runs it), so the layers below the commands read a verb's facts
 * here without loading its module.
 */
export { VERBS };

/** A verb the registry knows. */
export type VerbName = keyof typeof VERBS;

/** Every descriptor, in the order help lists them (the read path first). */
export const VERB_LIST: readonly VerbFacts[] = Object.values(VERBS);

/** The facts of a verb as typed (any case), or undefined for a word that is no verb. */
export function factsOf(verb: string): VerbFacts | undefined {
  const key = verb.toLowerCase();
  return Object.hasOwn(VERBS, key) ? (VERBS as Record<string, VerbFacts>)[key] : undefined;
}

/** The verb whose approved requests run under `policies.<action>` (a stored request's `action`). */
export function factsOfAction(action: string): VerbFacts | undefined {
  return VERB_LIST.find((facts) => facts.policy === action);
}

/** The verbs with a fact set, in help's order: `verbsWhere((v) => v.answer === 'shared')`. */
export function verbsWhere(test: (facts: VerbFacts) => boolean): string[] {
  return VERB_LIST.filter(test).map((facts) => facts.verb);
}

/** Who sees a read's answer in Slack, from its descriptor: a shared answer the channel, any other the asker. */
export function answerVisibility(facts: VerbFacts): 'in_channel' | 'ephemeral' {
  return facts.answer === 'shared' ? 'in_channel' : 'ephemeral';
}
