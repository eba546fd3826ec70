import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { en } from '../../src/i18n/en/index.js';
import { type Locale, localeFromSlack, messages } from '../../src/i18n/index.js';
import { tr } from '../../src/i18n/tr/index.js';
import { diffCatalogs, usedParameters } from './catalog-diff.js';

describe('the Turkish catalog mirrors the English one exactly', () => {
  it('has every key, of the same kind, and every message function takes and uses the same parameters', () => {
    expect(diffCatalogs(en, tr)).toEqual([]);
  });

  it('describes every error code, reading the same parameters as English', () => {
    const problems: string[] = [];
    for (const code of Object.values(ErrorCode)) {
      const read = (locale: Locale) =>
        usedParameters((params) => messages(locale).errors.describe({ code, params: params as never }));
      const [a, b] = [read('en'), read('tr')];
      if ([...a].sort().join() !== [...b].sort().join())
        problems.push(`${code}: en ${[...a].sort().join(' ')} / tr ${[...b].sort().join(' ')}`);
      // Every line is translated (the one that only passes its message through aside).
      if (code !== ErrorCode.AuditChainBroken) {
        expect(messages('tr').errors.describe({ code, params: {} })).not.toBe(
          messages('en').errors.describe({ code, params: {} }),
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it('the check itself catches a missing key, an extra key, another arity and an ignored parameter', () => {
    const base = { a: 'x', b: { c: (n: number, who: string) => `${n} ${who}` }, list: ['a', 'b'] };
    expect(diffCatalogs(base, { a: 'y', b: {}, list: ['a', 'b'] })).toEqual(['b.c: only in en']);
    expect(diffCatalogs(base, { ...base, z: 'new' })).toEqual(['z: only in tr']);
    expect(diffCatalogs(base, { ...base, b: { c: (n: number) => `${n}` } })).toEqual([
      'b.c: takes 2 parameters in en, 1 in tr',
    ]);
    // Same arity, but the Turkish line forgets who did it.
    expect(diffCatalogs(base, { ...base, b: { c: (n: number, _who: string) => `${n} kişi` } })).toEqual([
      'b.c: tr ignores #1',
    ]);
    // A property of a params object (errors, warnings) that only one side reads.
    expect(
      diffCatalogs(
        { w: (p: Record<string, string>) => `${p.queue} ${p.reason}` },
        { w: (p: Record<string, string>) => `${p.queue}` },
      ),
    ).toEqual(['w: tr ignores #0.reason']);
    expect(diffCatalogs(base, { ...base, list: ['a'] })).toEqual(['list: 2 items in en, 1 in tr']);
    expect(diffCatalogs(base, { ...base, a: () => 'x' })).toEqual(['a: string in en, function in tr']);
  });

  it('keeps the command vocabulary English: verbs, flags and keywords', () => {
    // `<system>` is `<sistem>` in Turkish, `[limit]` is `[sınır]`; what is typed as written
    // (`retry`, `all`, `--terminate`, `1h|6h|24h`) is the same word in both.
    const vocabulary = (usage: string) => {
      let text = usage.replace(/<[^<>|]*((?:\|[^<>|]+)*)>/g, '<$1>').replace(/--out \S+/g, '--out FILE');
      // Nested optional parts (`[system[/queue]]`) from the inside out.
      for (let before = ''; before !== text; ) {
        before = text;
        text = text.replace(/\[[^[\]|\s-](?:[^[\]|\s]|\[\])*\]/g, '[]');
      }
      return text;
    };
    const words = (list: readonly string[]) => list.map(vocabulary);
    expect(tr.help.verbs.map((v) => [v.verb, vocabulary(v.usage)])).toEqual(
      en.help.verbs.map((v) => [v.verb, vocabulary(v.usage)]),
    );
    expect(words(Object.values(tr.commands.usage))).toEqual(words(Object.values(en.commands.usage)));
    expect(words(Object.values(tr.scale.usage))).toEqual(words(Object.values(en.scale.usage)));
    for (const key of ['pause', 'resume', 'retry', 'approve', 'deny', 'pending', 'audit'] as const) {
      expect(vocabulary(tr.actions[key].usage)).toBe(vocabulary(en.actions[key].usage));
    }
    for (const key of ['ack', 'snooze', 'alerts'] as const) {
      expect(vocabulary(tr.escalation[key].usage)).toBe(vocabulary(en.escalation[key].usage));
    }
  });

  it('turns only the placeholders of a usage line Turkish', () => {
    expect(tr.actions.retry.usage).toBe(
      '/queue retry <sistem>/<kuyruk> <iş-id|all> [sınır] [--error <metin>] [--group <anahtar>] [--name <ad>] [--older-than <süre>] [--newer-than <süre>]',
    );
  });

  it('translates every placeholder of every usage line: none is left in English', () => {
    // What is typed as written, in both languages (states, keywords, locales, scales).
    const TYPED = new Set([
      'all',
      'waiting',
      'failed',
      'delayed',
      'verify',
      'n',
      'en',
      'tr',
      'full',
      'small',
    ]);
    /** The lowercase words inside `<…>` and `[…]`, nested ones included; flags, values and `/queue` aside. */
    const placeholders = (usage: string): string[] => {
      const found: string[] = [];
      for (const m of usage.replace(/\/queue\b/g, '').matchAll(/[<[]([^<>[\]]*)/g))
        for (const part of m[1]!.split(/[|\s/]+/)) {
          const word = part.replace(/…$/, '');
          if (/^[a-z][a-z-]*$/.test(word) && !TYPED.has(word)) found.push(word);
        }
      return found;
    };
    /** Every `usage` string of a catalog, by its path. */
    const usages = (node: unknown, path = ''): [string, string][] => {
      if (Array.isArray(node)) return node.flatMap((item, i) => usages(item, `${path}[${i}]`));
      if (typeof node !== 'object' || node === null) return [];
      return Object.entries(node).flatMap(([key, value]): [string, string][] => {
        const at = path ? `${path}.${key}` : key;
        if (key === 'usage' && typeof value === 'string') return [[at, value]];
        if (key === 'usage' && typeof value === 'object' && value !== null && !Array.isArray(value))
          return Object.entries(value).flatMap(([k, v]): [string, string][] =>
            typeof v === 'string' ? [[`${at}.${k}`, v]] : [],
          );
        return usages(value, at);
      });
    };
    const english = new Map(usages(en));
    const untranslated = (catalog: unknown) =>
      usages(catalog).flatMap(([path, usage]) => {
        const words = new Set(placeholders(english.get(path) ?? ''));
        return placeholders(usage)
          .filter((word) => words.has(word))
          .map((word) => `${path}: ${word}`);
      });
    expect(english.size).toBeGreaterThan(20);
    expect(untranslated(tr)).toEqual([]);
    // The check itself: a Turkish line with an English placeholder left in is caught.
    const slipped = {
      ...tr,
      purge: { ...tr.purge, undo: { ...tr.purge.undo, usage: '/queue undo <purge-request-id>' } },
    };
    expect(untranslated(slipped)).toEqual(['purge.undo.usage: purge-request-id']);
  });

  it('reads the way the runbooks write: kuyruk, bekleyen, başarısız, onay', () => {
    expect(tr.status.title).toBe('Kuyruk durumu');
    expect(tr.status.columns.waiting).toBe('bekleyen');
    expect(tr.status.columns.failed).toBe('başarısız');
    expect(tr.approvals.pendingHeader(2)).toBe('Onay bekleyen istekler: 2');
    expect(tr.approvals.approveButton).toBe('Onayla');
  });

  it("maps a Slack user's locale: tr-TR to Turkish, any en-* to English, anything else to none", () => {
    expect(localeFromSlack('tr-TR')).toBe('tr');
    expect(localeFromSlack('en-US')).toBe('en');
    expect(localeFromSlack('en-GB')).toBe('en');
    expect(localeFromSlack('de-DE')).toBeUndefined();
    expect(localeFromSlack(undefined)).toBeUndefined();
  });
});
