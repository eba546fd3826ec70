import { describe, expect, it } from 'vitest';
import { BULLMQ_FACTS } from '../../src/backends/bullmq/facts.js';
import { CELERY_FACTS } from '../../src/backends/celery/facts.js';
import { PLAIN_SYSTEM_FACTS } from '../../src/backends/facts.js';
import { factsOfKind } from '../../src/backends/kinds.js';
import { fixOffersOf } from '../../src/diagnosis/offers.js';
import { createStubBackend, createStubSystem } from './stub/index.js';

describe('what a kind of system declares it is like', () => {
  it('a stored type reads the facts its backend declares; a kind not built here declares nothing special', () => {
    expect(factsOfKind('bullmq')).toBe(BULLMQ_FACTS);
    expect(factsOfKind('celery')).toBe(CELERY_FACTS);
    expect(factsOfKind('stub')).toBe(PLAIN_SYSTEM_FACTS);
    // An inherited name is no kind.
    expect(factsOfKind('toString')).toBe(PLAIN_SYSTEM_FACTS);
  });

  it('why offers a system only the fixes its backend can run: none on a system with no ability', () => {
    const stub = createStubBackend('stubby', createStubSystem());
    expect(fixOffersOf(stub)).toEqual({ stopStuck: null, limitTarget: 'none', expireResults: false });
    expect(fixOffersOf(undefined)).toEqual(fixOffersOf(stub));
    const revoking = {
      ...stub,
      revoke: async () => ({ ids: [], terminate: true, answers: [], stillRunning: [] }),
    };
    expect(fixOffersOf(revoking).stopStuck).toBe('revoke');
  });
});
