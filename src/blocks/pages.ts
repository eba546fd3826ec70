import { type Locale, messages } from '../i18n/index.js';
import type { AlertPage } from '../store/alert.js';
import { formatUtc } from './format.js';
import { inline } from './kit.js';

/** A Slack user as a mention; anyone else (a command-line user) by name. */
const whoSays = (id: string): string => (/^[UW][A-Z0-9]+$/.test(id) ? `<@${id}>` : inline(id, 80));

/**
 * A message's pages, one line each: who was paged and when, who acknowledged where, a page
 * resolved in PagerDuty while the alert still fires, a pager that refused.
 */
export function pageLines(pages: readonly AlertPage[], locale: Locale): string[] {
  const t = messages(locale).escalation.page;
  return pages.slice(0, 5).map((p) => {
    const parts = [t.paged(inline(p.pager, 63), formatUtc(Date.parse(p.at), locale, false))];
    if (p.refused !== undefined) parts.push(t.refused(inline(p.refused, 150)));
    if (p.acknowledgedBy !== undefined) {
      const at = formatUtc(Date.parse(p.acknowledgedAt ?? p.at), locale, false);
      parts.push(
        p.acknowledgedBy.startsWith('pagerduty:')
          ? t.ackedInPagerDuty(inline(p.acknowledgedName ?? p.acknowledgedBy, 80), at)
          : t.ackedBy(whoSays(p.acknowledgedBy), at),
      );
    }
    if (p.resolvedBy !== undefined)
      parts.push(t.resolvedInPagerDuty(inline(p.resolvedName ?? p.resolvedBy, 80)));
    return parts.join(' · ');
  });
}
