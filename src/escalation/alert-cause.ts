import type { KnownBlock } from '@slack/types';
import { ActionId, indexedActionId } from '../blocks/action-ids.js';
import { actions, button, context, inline, section } from '../blocks/kit.js';
import { fixKey } from '../diagnosis/fix-key.js';
import type { Diagnosis, Finding } from '../diagnosis/types.js';
import { evidenceText } from '../diagnosis/words.js';
import { type Locale, messages } from '../i18n/index.js';
import type { AlertCause } from '../store/alert.js';

/** Fix buttons one cause shows on an alert message (the rest: the Why? button's answer). */
const MAX_FIX_BUTTONS = 3;

/**
 * The strong cause that explains an alert: one naming its rule (`no-workers`…), else one naming its
 * queue, else one of the whole system (memory, network). Possible causes are not named on an
 * alert: it abstains, as `why` does, and the Why? button shows what the evidence says.
 */
export function findingFor(
  diagnosis: Diagnosis,
  alert: { rule: string; queue?: string | undefined },
): Finding | undefined {
  const strong = diagnosis.causes.filter((c) => c.confidence === 'strong');
  return (
    // A cause of the alert's own rule's name explains it whichever queues it lists (at most 20).
    strong.find((c) => c.rule === alert.rule) ??
    strong.find((c) => alert.queue !== undefined && c.queues.includes(alert.queue)) ??
    strong.find((c) => c.queues.length === 0 || alert.queue === undefined)
  );
}

/** What an alert keeps of its cause: its words (in the bot's locale), fixed when it opens. */
export function alertCause(finding: Finding, now: number, locale: Locale): AlertCause {
  const t = messages(locale);
  const say = (i: number) => evidenceText(finding.evidence[i]!, now, locale, 'plain');
  // The summary leads with who left when the evidence knows (the runbook's "who left, when").
  const telling = Math.max(
    0,
    finding.evidence.findIndex((l) => l.code === 'workerLeft'),
  );
  // A finding lists at most 20 queues; its evidence counts them all.
  const queues = Math.max(
    finding.queues.length,
    ...finding.evidence.map((l) => (typeof l.params.queues === 'number' ? l.params.queues : 0)),
  );
  const lead = t.escalation.cause.lead(finding.id, t.why.cause[finding.id], queues);
  return {
    id: finding.id,
    summary: finding.evidence.length ? t.escalation.cause.summary(lead, say(telling)) : lead,
    evidence: finding.evidence.length ? say(0) : '',
    fixes: finding.fixes.map((f) => ({ command: f.words.join(' ') })),
    queues,
  };
}

/** An alert message's cause in words: its summary, and its evidence line when the summary does not end with it. */
export function causeSection(cause: AlertCause, locale: Locale): KnownBlock[] {
  const t = messages(locale).escalation.cause;
  const blocks: KnownBlock[] = [section(t.line(inline(cause.summary, 300)))];
  if (cause.evidence && !cause.summary.endsWith(cause.evidence))
    blocks.push(context(`• ${inline(cause.evidence, 300)}`));
  return blocks;
}

/**
 * A cause's buttons: its fixes (each runs `why <system> --fix <key>`, so a click reads the evidence
 * again and runs the fix through its own guards, policy and approval) and Why? (`why <scope>`).
 */
export function causeButtons(cause: AlertCause, system: string, whyScope: string, locale: Locale) {
  const buttons = cause.fixes.slice(0, MAX_FIX_BUTTONS).flatMap((fix, i) => {
    const value = `${fixKey({ words: fix.command.split(' ') })}/${system}`;
    return value.length <= 255
      ? [button(fix.command.slice(0, 75), indexedActionId(ActionId.WhyFix, i), value)]
      : [];
  });
  buttons.push(button(messages(locale).escalation.cause.why, ActionId.AlertWhy, whyScope));
  return buttons;
}

/** A grouped message's cause: its words, then its buttons in an actions block of their own. */
export function causeBlocks(
  cause: AlertCause,
  system: string,
  whyScope: string,
  locale: Locale,
): KnownBlock[] {
  return [...causeSection(cause, locale), actions(causeButtons(cause, system, whyScope, locale))];
}
