import { describe, expect, it } from 'vitest';
import { editDistance, rankBySimilarity, suggest, suggestFlag } from '../../src/lib/suggest.js';

describe('suggest', () => {
  it('proposes the queue one typo away', () => {
    expect(suggest('dispach-ios', ['dispatch-ios', 'dispatch-android', 'events'])).toBe('dispatch-ios');
  });

  it('treats two swapped letters as one slip', () => {
    expect(editDistance('stauts', 'status')).toBe(1);
    expect(suggest('stauts', ['status', 'dlq', 'workers', 'help'])).toBe('status');
  });

  it('ignores case differences', () => {
    expect(suggest('PUSHIZO', ['pushizo', 'zeus'])).toBe('pushizo');
  });

  it('proposes nothing when no candidate is plausibly what was meant', () => {
    expect(suggest('kubernetes', ['status', 'dlq', 'workers', 'help'])).toBeUndefined();
    expect(suggest('x', [])).toBeUndefined();
  });

  it('accepts a unique prefix of three or more characters', () => {
    expect(suggest('celery:alarm', ['celery', 'celery:alarm_processing', 'celery:default'])).toBe(
      'celery:alarm_processing',
    );
  });

  it('matches a Celery queue by its name without `celery:`, as the runbooks write it', () => {
    const zeus = ['celery', 'celery:alarm_processing', 'celery:default', 'celery:ota_processing'];
    expect(suggest('alarm_processing', zeus)).toBe('celery:alarm_processing');
    expect(suggest('alarm_procesing', zeus)).toBe('celery:alarm_processing');
  });

  it('takes a unique prefix of two characters, and words and flags one slip away', () => {
    const verbs = ['status', 'dlq', 'workers', 'pending', 'approve', 'audit', 'alerts', 'ack', 'trend'];
    expect(suggest('al', verbs)).toBe('alerts');
    expect(suggest('a', verbs)).toBeUndefined();
    expect(suggest('st', [...verbs, 'stuck'])).toBeUndefined();
    expect(suggestFlag('--jsn')).toBe('--json');
    expect(suggestFlag('--since')).toBeUndefined();
    expect(suggestFlag('status')).toBeUndefined();
  });

  it('orders candidates by similarity', () => {
    expect(rankBySimilarity('evnts', ['webhooks', 'events', 'journeys'])[0]).toBe('events');
  });
});

describe('bounded edit distance', () => {
  it('with a bound, answers bound + 1 for anything farther, without filling the whole table', () => {
    expect(editDistance('a'.repeat(5000), 'b'.repeat(5000), 3)).toBe(4);
    expect(editDistance('short', 'x'.repeat(4000), 2)).toBe(3);
  });

  it('with a bound, distances within it are exact', () => {
    expect(editDistance('dispach-ios', 'dispatch-ios', 3)).toBe(1);
    expect(editDistance('stauts', 'status', 1)).toBe(1);
    expect(editDistance('kitten', 'sitting', 3)).toBe(3);
    expect(editDistance('kitten', 'sitting', 2)).toBe(3);
  });

  it('agrees with the unbounded distance whenever that is within the bound', () => {
    const words = ['events', 'evnets', 'webhooks', 'journeys', 'dispatch-ios', 'dispatch-android', 'x', ''];
    for (const a of words)
      for (const b of words) {
        const exact = editDistance(a, b);
        for (const bound of [0, 1, 2, 5, 20]) {
          expect(editDistance(a, b, bound)).toBe(exact <= bound ? exact : bound + 1);
        }
      }
  });

  it('still suggests and ranks as before for ordinary typos', () => {
    const queues = Array.from({ length: 100 }, (_, i) => `q-${i}`);
    expect(suggest('q-9x9', queues)).toBe('q-99');
    expect(rankBySimilarity('q-99x', queues)[0]).toBe('q-99');
  });
});
