import { describe, expect, it } from 'vitest';
import { OpsError } from '../../src/errors.js';
import { parseTarget, parseWords, tokenize } from '../../src/pipeline/parse.js';

describe('command words', () => {
  it('splits on any whitespace and keeps quoted words whole', () => {
    expect(tokenize('  dlq   pushizo/dispatch-ios\t20 ')).toEqual(['dlq', 'pushizo/dispatch-ios', '20']);
    expect(tokenize(`deny r-7f3k "not during the incident" 'single quoted'`)).toEqual([
      'deny',
      'r-7f3k',
      'not during the incident',
      'single quoted',
    ]);
  });

  it('understands the curly quotes Slack clients type', () => {
    expect(tokenize('deny r-1 “wrong queue, see thread”')).toEqual([
      'deny',
      'r-1',
      'wrong queue, see thread',
    ]);
  });

  it('unescapes inside double quotes and keeps an empty quoted word', () => {
    expect(tokenize('a "b \\"c\\"" ""')).toEqual(['a', 'b "c"', '']);
  });

  it('refuses an unclosed quote as a usage error', () => {
    expect(() => tokenize('deny r-1 "oops')).toThrow(OpsError);
  });

  it('lower-cases the verb and answers help for no words', () => {
    expect(parseWords(['STATUS', 'Pushizo'])).toEqual({ verb: 'status', args: ['Pushizo'] });
    expect(parseWords([])).toEqual({ verb: 'help', args: [] });
    expect(parseWords(['', ''])).toEqual({ verb: 'help', args: [] });
  });
});

describe('system/queue targets', () => {
  it('splits on the first slash only, so Celery queue names keep their colons and slashes', () => {
    expect(parseTarget('zeus/celery:alarm_processing')).toEqual({
      system: 'zeus',
      queue: 'celery:alarm_processing',
    });
    expect(parseTarget('zeus/a/b')).toEqual({ system: 'zeus', queue: 'a/b' });
  });

  it('allows a system alone', () => {
    expect(parseTarget('pushizo')).toEqual({ system: 'pushizo' });
  });

  it('refuses a target with an empty side', () => {
    for (const bad of ['/events', 'pushizo/', '']) {
      expect(() => parseTarget(bad)).toThrow(OpsError);
    }
  });
});
