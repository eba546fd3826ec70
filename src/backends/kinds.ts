import { BULLMQ_FACTS } from './bullmq/facts.js';
import { CELERY_FACTS } from './celery/facts.js';
import { PLAIN_SYSTEM_FACTS, type SystemFacts } from './facts.js';

/**
 * The facts of each kind of system queue-ops builds, by `type`: for what has only a system's
 * stored `type` and no backend at hand (the monitor's samples, a view built from a read). A live
 * backend's `facts` are the same constant (the contract suite checks it). A new kind adds its line.
 */
const FACTS_BY_KIND: Readonly<Record<string, SystemFacts>> = {
  bullmq: BULLMQ_FACTS,
  celery: CELERY_FACTS,
};

/** The facts of a kind of system; a kind not built here declares nothing special. */
export function factsOfKind(type: string): SystemFacts {
  return Object.hasOwn(FACTS_BY_KIND, type) ? FACTS_BY_KIND[type]! : PLAIN_SYSTEM_FACTS;
}
