import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editDistance, suggest } from '../../src/lib/suggest.js';

describe('editDistance', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('counts swapping two neighbouring letters as one edit', () => {
    expect(editDistance('dispacth', 'dispatch')).toBe(1);
  });

  it('is symmetric and zero only for equal strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = editDistance(a, b);
        expect(editDistance(b, a)).toBe(d);
        expect(d === 0).toBe(a === b);
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
      }),
    );
  });
});

describe('suggest', () => {
  const queues = ['scheduler', 'audience', 'dispatch-ios', 'dispatch-android', 'events', 'webhooks'];

  it('suggests the queue a typo was meant to name', () => {
    expect(suggest('scheduler', queues)).toBe('scheduler');
    expect(suggest('shceduler', queues)).toBe('scheduler');
    expect(suggest('webhoks', queues)).toBe('webhooks');
    expect(suggest('dispatch-io', queues)).toBe('dispatch-ios');
  });

  it('ignores case', () => {
    expect(suggest('EVENTS', queues)).toBe('events');
  });

  it('completes a prefix only when exactly one candidate starts with it', () => {
    expect(suggest('aud', queues)).toBe('audience');
    expect(suggest('dispatch', queues)).toBeUndefined();
  });

  it('suggests nothing when no candidate is close', () => {
    expect(suggest('payments', queues)).toBeUndefined();
    expect(suggest('x', queues)).toBeUndefined();
    expect(suggest('', queues)).toBeUndefined();
    expect(suggest('events', [])).toBeUndefined();
  });
});
