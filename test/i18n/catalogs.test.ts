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

  it('keeps the command vocabulary English: verbs, flags and keywords; only placeholders are Turkish', () => {
    // `<system>` is `<sistem>` in Turkish, `[limit]` is `[sınır]`; what is typed as written
    // (`retry`, `all`, `--terminate`, `1h|6h|24h`) is the same word in both.
    const vocabulary = (usage: string) =>
      usage
        .replace(/<[^<>|]*((?:\|[^<>|]+)*)>/g, '<$1>')
        .replace(/\[[^[\]|\s-][^[\]|\s]*\]/g, '[]')
        .replace(/--out \S+/g, '--out FILE');
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
    expect(tr.actions.retry.usage).toBe('/queue retry <sistem>/<kuyruk> <iş-id|all> [sınır]');
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
