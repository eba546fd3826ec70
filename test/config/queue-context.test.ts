import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { queueContextFor, queuePatternMatches } from '../../src/config/queue-context.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { ErrorCode, OpsError } from '../../src/errors.js';
import { type BullmqSystemInput, bullmqSystem, configYaml } from '../helpers/config-file.js';

/** A config whose pushizo system lists `queues` as given; `more` adds the other keys. */
function withQueues(
  queues: NonNullable<BullmqSystemInput['queues']>,
  more: Omit<ConfigInput, 'systems'> = {},
): string {
  return configYaml({
    ...more,
    systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:6390', 'hs', { queues })],
  });
}

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, {});
  } catch (error) {
    expect(error).toBeInstanceOf(OpsError);
    expect((error as OpsError).code).toBe(ErrorCode.ConfigInvalid);
    return (error as OpsError).params.problems as string[];
  }
  throw new Error('config was accepted');
}

describe('a system’s queues with who owns them', () => {
  it('keeps plain names working, reads objects and patterns, and hands every consumer plain names', () => {
    // Every key an entry may have, each kept as written.
    const webhooks = {
      name: 'webhooks',
      owner: 'S0WEBHOOKS',
      runbook: 'https://runbooks.example.com/webhooks',
      dashboard: 'https://grafana.example.com/d/q?var-queue=webhooks&from=now-1h',
      notes: 'endpoint slow → WEBHOOK_TIMEOUT_MS',
    };
    const config = parseConfig(
      withQueues(['scheduler', webhooks, { name: 'dispatch-*', owner: 'U0ALICE' }, { name: 'audience' }]),
      {},
    );
    const [system] = config.systems;
    expect(system!.queues).toEqual(['scheduler', 'webhooks', 'audience']);
    expect(system!.queuePatterns).toEqual(['dispatch-*']);
    expect(system!.queueContext).toEqual([webhooks, { name: 'dispatch-*', owner: 'U0ALICE' }]);
    // A config of plain names reads exactly as before: names only, nothing else added.
    const plain = parseConfig(withQueues(['scheduler', 'dispatch-ios']), {}).systems[0]!;
    expect(plain.queues).toEqual(['scheduler', 'dispatch-ios']);
    expect(plain).not.toHaveProperty('queuePatterns');
    expect(plain).not.toHaveProperty('queueContext');
  });

  it('refuses a runbook or dashboard that is not an https: URL, in one line naming the key', () => {
    for (const [key, url] of [
      ['runbook', 'http://runbooks.example.com/webhooks'],
      ['dashboard', 'javascript:alert(1)'],
      ['runbook', 'https://runbooks.example.com/a|b'],
      ['dashboard', 'not a url'],
    ] as const) {
      const problems = problemsOf(withQueues(['scheduler', { name: 'webhooks', [key]: url }]));
      expect(problems).toEqual([
        `systems[0].queues[1].${key}: expected an https:// URL (at most 500 characters; no spaces, "<", ">" or "|")`,
      ]);
    }
  });

  it('refuses an owner that is not a Slack user or user group, a bad name and an unknown key, each naming its path', () => {
    expect(problemsOf(withQueues([{ name: 'webhooks', owner: '@webhooks-team' }]))).toEqual([
      'systems[0].queues[0].owner: expected a Slack user group id (S…) or user id (U…/W…)',
    ]);
    expect(problemsOf(withQueues([{ name: 'a/b' }]))).toEqual([
      'systems[0].queues[0].name: expected a queue name without "/" or spaces',
    ]);
    // @ts-expect-error the schema has no `team`: tsc refuses it as the loader does
    expect(problemsOf(withQueues([{ name: 'webhooks', team: 'S0X' }]))).toEqual([
      'systems[0].queues[0].team: unknown key',
    ]);
    // @ts-expect-error a number is neither a queue name nor an entry
    expect(problemsOf(withQueues([42]))).toEqual([
      'systems[0].queues[0]: expected a queue name, or { name, owner, runbook, dashboard, notes }',
    ]);
  });

  it('tells a Turkish team in Turkish', () => {
    expect(
      problemsOf(withQueues([{ name: 'webhooks', runbook: 'http://x.example' }], { locale: 'tr' })),
    ).toEqual([
      'systems[0].queues[0].runbook: bir https:// adresi olmalı (en çok 500 karakter; boşluk, "<", ">" ya da "|" olmadan)',
    ]);
  });

  it('takes a rule’s mentionOwner, and refuses one that is not a boolean', () => {
    const rules = (mentionOwner: boolean): Omit<ConfigInput, 'systems'> => ({
      escalation: { rules: [{ name: 'dlq-growth', metric: 'failedIncrease', above: 10, mentionOwner }] },
    });
    const config = parseConfig(withQueues(['webhooks'], rules(true)), {});
    expect(config.escalation.rules[0]!.mentionOwner).toBe(true);
    // @ts-expect-error not a boolean: tsc refuses it as the loader does
    expect(problemsOf(withQueues(['webhooks'], rules('sometimes')))[0]).toMatch(
      /^escalation\.rules\[0\]\.mentionOwner: /,
    );
  });
});

describe('the context of one queue', () => {
  const entries = [
    { name: 'dispatch-*', owner: 'S0DELIVERY', notes: 'provider slow' },
    { name: 'dispatch-io*', owner: 'S0IOS' },
    { name: 'dispatch-ios', runbook: 'https://r.example.com/ios' },
    { name: '*-sms', owner: 'S0SMS' },
  ];

  it('is the exact entry’s over any pattern, else the most specific pattern’s', () => {
    expect(queueContextFor(entries, 'dispatch-ios')).toEqual({ runbook: 'https://r.example.com/ios' });
    expect(queueContextFor(entries, 'dispatch-iosx')).toEqual({ owner: 'S0IOS' });
    expect(queueContextFor(entries, 'dispatch-web')).toEqual({ owner: 'S0DELIVERY', notes: 'provider slow' });
    // Two patterns of the same weight: the one written first.
    expect(queueContextFor(entries, 'dispatch-sms')).toEqual({ owner: 'S0DELIVERY', notes: 'provider slow' });
    expect(queueContextFor(entries, 'events')).toBeUndefined();
    expect(queueContextFor(undefined, 'events')).toBeUndefined();
  });

  it('matches patterns with * as the only wildcard', () => {
    expect(queuePatternMatches('dispatch-*', 'dispatch-')).toBe(true);
    expect(queuePatternMatches('dispatch-*', 'dispatch')).toBe(false);
    expect(queuePatternMatches('a*b*c', 'a-b-b-c')).toBe(true);
    expect(queuePatternMatches('a*b*c', 'acb')).toBe(false);
    expect(queuePatternMatches('celery:*', 'celery:alarm_processing')).toBe(true);
    // Regex characters mean themselves.
    expect(queuePatternMatches('a.b*', 'axb1')).toBe(false);
    expect(queuePatternMatches('*', 'anything')).toBe(true);
  });
});
