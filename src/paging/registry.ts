import type { PagerConfig } from '../config/schema.js';
import { jsmPager } from './jsm.js';
import type { Pager, PagerHealth } from './pager.js';
import { pagerDutyPager } from './pagerduty.js';
import { type PagerRule, pagerMatches } from './plan.js';

/** A configured pager: its rules (match, afterMinutes) and its client. */
export type ConfiguredPager = PagerRule & { client: Pager };

/** The pagers of `paging:`, and what each last answered (for `/readyz`). */
export interface Pagers {
  readonly all: readonly ConfiguredPager[];
  get(name: string): ConfiguredPager | undefined;
  /** The pagers whose `match` takes this alert. */
  matching(alert: Parameters<typeof pagerMatches>[1]): ConfiguredPager[];
  /** The names of the PagerDuty pagers (their webhook acknowledges in queue-ops). */
  readonly pagerDuty: ReadonlySet<string>;
  /** `ok`, or `refused` since the pager last refused its key. */
  health(): Record<string, PagerHealth>;
  note(name: string, health: PagerHealth): void;
}

/** One pager's client; a new pager type is one more line here. */
function createPager(config: PagerConfig, fetchImpl?: typeof fetch): Pager {
  switch (config.type) {
    case 'pagerduty':
      return pagerDutyPager(config, fetchImpl);
    case 'jsm':
      return jsmPager(config, fetchImpl);
  }
}

export function createPagers(configs: readonly PagerConfig[], fetchImpl?: typeof fetch): Pagers {
  const all = configs.map((c) => ({
    name: c.name,
    type: c.type,
    ...(c.match ? { match: c.match } : {}),
    afterMinutes: c.afterMinutes,
    client: createPager(c, fetchImpl),
  }));
  const byName = new Map(all.map((p) => [p.name, p]));
  const health = new Map<string, PagerHealth>(all.map((p) => [p.name, 'ok']));
  return {
    all,
    get: (name) => byName.get(name),
    matching: (alert) => all.filter((p) => pagerMatches(p, alert)),
    pagerDuty: new Set(all.filter((p) => p.type === 'pagerduty').map((p) => p.name)),
    health: () => Object.fromEntries(health),
    note(name, value) {
      if (health.has(name)) health.set(name, value);
    },
  };
}
