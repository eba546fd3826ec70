import { ActionId } from '../blocks/action-ids.js';
import { formatRelative, formatUtc } from '../blocks/format.js';
import { fitEscaped } from '../blocks/kit.js';
import type { KnownBlock, Message } from '../blocks/message.js';
import { cutWithEllipsis, escapeMrkdwn } from '../blocks/mrkdwn.js';
import { actionOutcome } from '../blocks/scale.js';
import { ErrorCode, type ErrorParams } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { scrubSecrets } from '../lib/scrub.js';
import type { ActionRequest } from '../store/store.js';
import { factsOfAction } from '../verbs.js';
import type { ActionProgress } from './service.js';

const who = (id: string, name?: string) => (name ? `${name} (${id})` : id);

/** A person, and for one typing on the command line the OS account behind the id they claimed. */
const whoFrom = (locale: Locale, id: string, name?: string, osUser?: string) =>
  osUser === undefined
    ? who(id, name)
    : `${who(id, name)} ${messages(locale).approvals.viaCommandLine(osUser)}`;

/** The headline: an interrupted request that never started did not run at all, and says so. */
function statusLine(request: ActionRequest, locale: Locale): string {
  const t = messages(locale).approvals;
  if (request.status === 'interrupted' && !request.startedAt) return t.interruptedBeforeStart;
  return t.status[request.status] ?? request.status;
}
/** `2026-12-01 07:28 UTC`, or in Turkish `1 Aralık 2026 07:28 UTC`, as every other time is shown. */
const utc = (iso: string, locale: Locale) => formatUtc(Date.parse(iso), locale, false);

const errorCodes: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/**
 * Why a failed or interrupted request failed, as an error a reply can carry: the action's own
 * coded failure (`NoWorkersAnswered`, `RedisUnavailable`…) when it had one, otherwise `Internal`
 * with the stored text.
 */
export function requestFailure(
  request: ActionRequest,
): { code: ErrorCode; params: ErrorParams } | { code: 'Internal'; params: { message: string } } {
  const result = request.result ?? {};
  if (typeof result.code === 'string' && errorCodes.has(result.code)) {
    const params = typeof result.params === 'object' && result.params !== null ? result.params : {};
    return { code: result.code as ErrorCode, params: params as ErrorParams };
  }
  return { code: 'Internal', params: { message: request.error ?? request.status } };
}

/**
 * "Purging… 340,000 of 1,000,000, 34 %, ~12 s left": the time left is extrapolated from the rate
 * since the first report (`since`: when `done` was `doneAtStart`).
 */
export function progressLine(
  action: string,
  progress: ActionProgress,
  since: { at: number; done: number },
  now: number,
  locale: Locale,
): string {
  const t = messages(locale).purge;
  const elapsed = (now - since.at) / 1000;
  const rate = elapsed > 0 ? (progress.done - since.done) / elapsed : 0;
  const left = rate > 0 ? Math.max(0, (progress.total - progress.done) / rate) : null;
  const verb = (factsOfAction(action)?.progress ?? ((l: Locale) => messages(l).purge.purgingVerb))(locale);
  return t.progress(verb, progress.done, progress.total, left);
}

/**
 * Outcome line of a finished request, from the stored result: a done request in its verb's own
 * words (its descriptor's `outcome`), else its report's (`actionOutcome`).
 */
function outcomeLine(request: ActionRequest, locale: Locale): string | undefined {
  const t = messages(locale).approvals;
  if (request.status === 'done') {
    const result = request.result ?? {};
    return (
      factsOfAction(request.action)?.outcome?.(result, request, locale) ??
      actionOutcome(request.action, result, locale)
    );
  }
  if (request.status === 'failed' && request.error) {
    const failure = requestFailure(request);
    // An action's failure may quote a Redis URL or an HTTP error: scrubbed like a job error.
    return t.error(
      scrubSecrets(
        failure.code === 'Internal' ? failure.params.message : messages(locale).errors.describe(failure),
      ),
    );
  }
  if (request.status === 'denied') return t.deniedBy(request.deniedBy ?? '?', request.denyReason);
  return undefined;
}

/**
 * The request as posted in the channel and updated in place: what, where, the preview computed
 * when it was asked, who asked, when it expires, and — while pending — Approve and Deny buttons
 * whose value is only the request id.
 */
export function requestMessage(
  request: ActionRequest,
  locale: Locale,
  now: Date = new Date(),
  /** While executing: the progress line (`progressLine`). */
  progress?: string,
): Message {
  const t = messages(locale).approvals;
  const lines: string[] = [`*${escapeMrkdwn(statusLine(request, locale))}*`];
  lines.push(escapeMrkdwn(request.preview));
  if (progress && request.status === 'executing') lines.push(escapeMrkdwn(progress));
  const outcome = outcomeLine(request, locale);
  if (outcome) lines.push(escapeMrkdwn(outcome));
  const context: string[] = [
    `\`${escapeMrkdwn(request.id)}\``,
    escapeMrkdwn(
      t.requestedBy(
        whoFrom(locale, request.requestedBy, request.requestedByName, request.requestedByOsUser),
        utc(request.createdAt, locale),
      ),
    ),
  ];
  if (request.requiredApprovals > 0)
    context.push(escapeMrkdwn(t.needs(request.approvals.length, request.requiredApprovals)));
  if (request.approvals.length > 0) {
    context.push(
      escapeMrkdwn(
        t.approvedBy(
          request.approvals.map((a) => whoFrom(locale, a.userId, a.userName, a.osUser)).join(', '),
        ),
      ),
    );
  }
  if (request.status === 'pending') {
    context.push(
      escapeMrkdwn(
        `${t.expires(utc(request.expiresAt, locale))} (${formatRelative(Date.parse(request.expiresAt), now, locale)})`,
      ),
    );
  }
  if (request.startedAt && request.finishedAt) {
    context.push(
      escapeMrkdwn(t.duration((Date.parse(request.finishedAt) - Date.parse(request.startedAt)) / 1000)),
    );
  }
  const blocks: KnownBlock[] = [
    {
      type: 'header',
      text: { type: 'plain_text', text: fitEscaped(t.header(request.action, request.target), 150) },
    },
    { type: 'section', text: { type: 'mrkdwn', text: cutWithEllipsis(lines.join('\n'), 3000) } },
    {
      type: 'context',
      elements: context.slice(0, 10).map((text) => ({ type: 'mrkdwn', text: cutWithEllipsis(text, 3000) })),
    },
  ];
  if (request.status === 'pending') {
    blocks.push({
      type: 'actions',
      block_id: `request:${request.id}`,
      elements: [
        {
          type: 'button',
          action_id: ActionId.Approve,
          text: { type: 'plain_text', text: t.approveButton },
          style: 'primary',
          value: request.id,
          // The descriptor says whether the action can simply be taken back; if not, confirm first.
          ...(factsOfAction(request.action)?.destructive
            ? {
                confirm: {
                  title: { type: 'plain_text', text: t.confirmTitle },
                  text: { type: 'plain_text', text: fitEscaped(t.confirmText(request.preview), 300) },
                  confirm: { type: 'plain_text', text: t.confirmYes },
                  deny: { type: 'plain_text', text: t.confirmNo },
                  style: 'danger' as const,
                },
              }
            : {}),
        },
        {
          type: 'button',
          action_id: ActionId.Deny,
          text: { type: 'plain_text', text: t.denyButton },
          value: request.id,
        },
      ],
    });
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: escapeMrkdwn(t.howToApprove(request.id)) }],
    });
  }
  // A done purge offers its undo where it was approved: the undo is a request of its own.
  const purgeId = request.result?.purgeId;
  if (request.action === 'purge' && request.status === 'done' && typeof purgeId === 'string') {
    blocks.push({
      type: 'actions',
      block_id: `undo:${request.id}`,
      elements: [
        {
          type: 'button',
          action_id: ActionId.PurgeUndo,
          text: { type: 'plain_text', text: t.undoButton },
          value: purgeId,
        },
      ],
    });
  }
  // The notification text is mrkdwn too: a queue name from Redis must not form `<!channel>`.
  const text = fitEscaped(
    `${t.header(request.action, request.target)}: ${t.status[request.status] ?? request.status}`,
    3000,
  );
  return { text, blocks };
}

/** The `pending` command's answer. */
export function pendingMessage(requests: ActionRequest[], locale: Locale): Message {
  const t = messages(locale).approvals;
  const shown = requests.slice(0, 40);
  const lines = shown.map((r) =>
    escapeMrkdwn(
      t.pendingLine(
        r.id,
        r.action,
        r.target,
        who(r.requestedBy, r.requestedByName),
        utc(r.expiresAt, locale),
        r.approvals.length,
        r.requiredApprovals,
      ),
    ),
  );
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${t.pendingHeader(requests.length)}*` } },
  ];
  for (let i = 0; i < lines.length; i += 10) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: cutWithEllipsis(lines.slice(i, i + 10).join('\n'), 3000) },
    });
  }
  return { text: t.pendingHeader(requests.length), blocks };
}

/** JSON shape of a request for `--json` (ARCHITECTURE.md: `data.request`). */
export function requestData(request: ActionRequest) {
  return {
    id: request.id,
    action: request.action,
    target: request.target,
    status: request.status,
    requestedBy: request.requestedBy,
    expiresAt: request.expiresAt,
    preview: request.preview,
    approvals: request.approvals.map((a) => a.userId),
    requiredApprovals: request.requiredApprovals,
    ...(request.result !== undefined ? { result: request.result } : {}),
    ...(request.error !== undefined ? { error: request.error } : {}),
  };
}
