import { describe, expect, it } from 'vitest';
import { editDistance, rankBySimilarity, suggest } from '../../src/lib/suggest.js';

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

  it('orders candidates by similarity', () => {
    expect(rankBySimilarity('evnts', ['webhooks', 'events', 'journeys'])[0]).toBe('events');
  });
});
