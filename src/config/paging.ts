import * as z from 'zod/mini';
import { nonEmpty } from './parts.js';
import type { ConfigProblems } from './problems.js';

/** `paging:`, the pagers, worded by `p`. */
export function buildPagerSchema(p: ConfigProblems) {
  /**
   * Who a pager pages (`paging[].match`): each list given must contain the alert's value; a pager
   * without `match` pages every alert.
   */
  const pagerMatch = z.strictObject({
    severities: z.optional(z.array(z.enum(['critical', 'warning', 'info']))),
    systems: z.optional(z.array(nonEmpty())),
    rules: z.optional(z.array(nonEmpty())),
  });
  const pagerCommon = {
    name: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, { error: p.pagerName })),
    /** The service's public endpoint unless given (a test points it at a stand-in). */
    url: z.optional(z.string().check(z.regex(/^https?:\/\/\S+$/, { error: p.pagerUrl }))),
    match: z.optional(pagerMatch),
    /** Pages once the alert has been open this long (from `openedAt`); 0: at once. */
    afterMinutes: z._default(z.number().check(z.minimum(0), z.maximum(7 * 24 * 60)), 0),
  };
  /** A pager (`paging:`), like an Alertmanager receiver: PagerDuty's Events API v2, or JSM's alerts. */
  const pager = z.discriminatedUnion('type', [
    z.strictObject({
      ...pagerCommon,
      type: z.literal('pagerduty'),
      /** The Events v2 integration's routing key, as `${ENV}`. */
      routingKey: nonEmpty(),
    }),
    z.strictObject({
      ...pagerCommon,
      type: z.literal('jsm'),
      /** The JSM (Opsgenie) API integration's key, as `${ENV}`. */
      apiKey: nonEmpty(),
    }),
  ]);

  return pager;
}

/** A pager's name used twice: the second and later, each with its path from the config's root. */
export function pagerIssues(
  paging: readonly { name: string }[],
  p: ConfigProblems,
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const pagers = new Map<string, number>();
  paging.forEach((pager, index) => {
    const first = pagers.get(pager.name);
    if (first !== undefined)
      issues.push({
        path: ['paging', index, 'name'],
        message: p.duplicatePager(pager.name, `paging[${first}]`),
      });
    else pagers.set(pager.name, index);
  });
  return issues;
}
