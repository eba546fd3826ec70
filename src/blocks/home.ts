import type { KnownBlock } from '@slack/types';
import type { SystemStatus } from '../backends/queue-backend.js';
import { type Locale, messages } from '../i18n/index.js';
import type { Alert, Silence } from '../store/alert.js';
import type { ActionRequest } from '../store/store.js';
import type { TimelineEvent } from '../timeline/events.js';
import { ActionId } from './action-ids.js';
import { formatNumber, formatUtc } from './format.js';
import { context, header, section } from './kit.js';
import { SlackLimits } from './limits.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { pageLines } from './pages.js';
import { describeEvent } from './timeline.js';
import { assertValidMessage } from './validate.js';

/** One system's line: its status, or the error code that stood in for it. */
export type HomeSystem = { name: string; status: SystemStatus } | { name: string; error: string };

/** What one person's Home tab shows. */
export interface HomeInput {
  systems: HomeSystem[];
  alerts: Alert[];
  /** Silences in force (`silence …`), oldest first; the section is left out when there are none. */
  silences?: Silence[];
  /** Pending requests this person may approve, oldest first. */
  waiting: ActionRequest[];
  /** This person's own recent entries, newest first, as timeline events. */
  recent: TimelineEvent[];
  /** The answer to this person's last click on the tab, shown at the top until the next open. */
  notice?: string;
  now: Date;
}

/** Home views hold 100 blocks; these caps keep every section inside that with room to spare. */
export const HOME_MAX_ALERTS = 10;
export const HOME_MAX_REQUESTS = 15;
export const HOME_MAX_RECENT = 10;
export const HOME_MAX_SILENCES = 5;

export interface HomeView {
  type: 'home';
  blocks: KnownBlock[];
}

const hm = (iso: string, locale: Locale) => formatUtc(Date.parse(iso), locale, false);

/** The Home tab as one `views.publish` view; checked against the Home tab's limits. */
export function homeView(input: HomeInput, locale: Locale): HomeView {
  const t = messages(locale).home;
  const blocks: KnownBlock[] = [
    header(t.title),
    context(escapeMrkdwn(t.updated(formatUtc(input.now, locale)))),
  ];
  if (input.notice) blocks.push(section(escapeMrkdwn(input.notice)));

  blocks.push(header(t.waiting));
  if (input.waiting.length === 0) blocks.push(context(escapeMrkdwn(t.noWaiting)));
  for (const request of input.waiting.slice(0, HOME_MAX_REQUESTS)) {
    const by = request.requestedByName ?? request.requestedBy;
    blocks.push(
      section(
        `${escapeMrkdwn(t.requestLine(request.id, request.action, request.target, by, hm(request.expiresAt, locale)))}\n${escapeMrkdwn(request.preview)}`,
      ),
      {
        type: 'actions',
        // Action ids repeat across requests; each request has its own block.
        block_id: `home-request:${request.id}`,
        elements: [
          {
            type: 'button',
            action_id: ActionId.Approve,
            text: { type: 'plain_text', text: messages(locale).approvals.approveButton },
            style: 'primary',
            value: request.id,
          },
          {
            type: 'button',
            action_id: ActionId.Deny,
            text: { type: 'plain_text', text: messages(locale).approvals.denyButton },
            value: request.id,
          },
        ],
      },
    );
  }
  if (input.waiting.length > HOME_MAX_REQUESTS)
    blocks.push(context(escapeMrkdwn(t.moreRequests(input.waiting.length - HOME_MAX_REQUESTS))));

  blocks.push(header(t.alerts));
  const alertLines = input.alerts.slice(0, HOME_MAX_ALERTS).map(
    (a) =>
      `• ${escapeMrkdwn(t.alertLine(messages(locale).escalation.severity[a.severity] ?? a.severity, a.rule, a.subject, hm(a.openedAt, locale), a.ackedBy))}` +
      // Who was paged, when, and who acknowledged where (already escaped, names in code).
      (a.pages?.length
        ? messages(locale).escalation.page.listPaged(pageLines(a.pages, locale).join('; '))
        : ''),
  );
  if (input.alerts.length > HOME_MAX_ALERTS)
    alertLines.push(escapeMrkdwn(t.moreAlerts(input.alerts.length - HOME_MAX_ALERTS)));
  blocks.push(alertLines.length > 0 ? section(alertLines.join('\n')) : context(escapeMrkdwn(t.noAlerts)));

  const silences = input.silences ?? [];
  if (silences.length > 0) {
    blocks.push(header(t.silences));
    const lines = silences
      .slice(0, HOME_MAX_SILENCES)
      .map(
        (s) =>
          `• ${escapeMrkdwn(t.silenceLine(s.id, s.pattern, hm(s.expiresAt, locale), s.createdBy, s.reason?.slice(0, 200)))}`,
      );
    if (silences.length > HOME_MAX_SILENCES)
      lines.push(escapeMrkdwn(t.moreSilences(silences.length - HOME_MAX_SILENCES)));
    blocks.push(section(lines.join('\n')));
  }

  blocks.push(header(t.systems));
  const systemLines = input.systems.map((s) => {
    if ('error' in s) {
      // The error's code in words (Redis did not answer…), as the timeline words it.
      const reasons = messages(locale).timeline.events.reasons as Record<string, string>;
      const why = Object.hasOwn(reasons, s.error) ? reasons[s.error]! : s.error;
      return `:x: ${escapeMrkdwn(t.systemDown(s.name, why))}`;
    }
    const q = s.status.queues;
    // Waiting as everywhere: prioritized jobs wait too.
    const waiting = q.reduce((n, x) => n + x.waiting + x.prioritized, 0);
    const failed = q.reduce((n, x) => n + x.failed, 0);
    const paused = q.filter((x) => x.isPaused).length;
    const mark = failed > 0 || paused > 0 ? ':warning:' : ':white_check_mark:';
    return `${mark} ${escapeMrkdwn(
      t.systemLine(
        s.name,
        s.status.type,
        q.length,
        formatNumber(waiting, locale),
        formatNumber(failed, locale),
        paused,
      ),
    )}`;
  });
  blocks.push(systemLines.length > 0 ? section(systemLines.join('\n')) : context(escapeMrkdwn(t.noSystems)));

  blocks.push(header(t.recent));
  const recent = input.recent.slice(0, HOME_MAX_RECENT).map((event) => {
    const { what } = describeEvent(event, locale);
    return `\`${hm(event.at, locale)}\` ${escapeMrkdwn(what)}`;
  });
  blocks.push(recent.length > 0 ? section(recent.join('\n')) : context(escapeMrkdwn(t.noRecent)));

  const view: HomeView = { type: 'home', blocks: blocks.slice(0, SlackLimits.modalBlocks) };
  assertValidMessage({ text: t.title, blocks: view.blocks }, 'modal');
  return view;
}
