import type { KnownBlock } from '@slack/types';
import { type Locale, messages } from '../i18n/index.js';
import { context, fitEscaped, header, inCode, packSections, section } from './kit.js';
import { BUILDER_TEXT_BUDGET, SlackLimits } from './limits.js';
import type { Message } from './message.js';

/** One line of `/queue help`. `usage` is the words after `/queue`, e.g. `dlq <system>/<queue> [limit]`. */
export interface HelpVerb {
  verb: string;
  usage: string;
  summary: string;
}

/** The read path's verbs (status, dlq, workers, help), in the given locale. */
export function defaultHelpVerbs(locale: Locale): HelpVerb[] {
  return messages(locale).help.verbs.map((v) => ({ ...v }));
}

/**
 * The `/queue help` message. `verbs` are added after the defaults; an entry whose verb is already
 * listed replaces that default, so later issues can register pause, approve, audit, … here.
 */
export function helpMessage(
  locale: Locale,
  verbs: HelpVerb[] = [],
  /** Which read-only answers the channel sees and which only the asker does. */
  answers: { shared: readonly string[]; own: readonly string[] } = { shared: [], own: [] },
): Message {
  const t = messages(locale).help;
  const list = defaultHelpVerbs(locale);
  for (const extra of verbs) {
    const at = list.findIndex((v) => v.verb === extra.verb);
    if (at >= 0) list[at] = extra;
    else list.push(extra);
  }
  // `help` is the last line however many verbs were added after the defaults.
  const helpAt = list.findIndex((v) => v.verb === 'help');
  if (helpAt >= 0) list.push(...list.splice(helpAt, 1));
  const all = list.map((v) => t.line(inCode(v.usage, 200), fitEscaped(v.summary, 600)));
  const lines: string[] = [];
  let used = 0;
  for (const line of all) {
    if (used + line.length + 1 > BUILDER_TEXT_BUDGET - 500) {
      lines.push(t.more(all.length - lines.length));
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  const room = SlackLimits.messageBlocks - 3;
  const blocks: KnownBlock[] = [
    header(t.title),
    section(t.intro),
    ...packSections(lines).slice(0, room).map(section),
    context(
      t.footer(
        answers.shared.map((v) => inCode(v, 40)).join(', '),
        answers.own.map((v) => inCode(v, 40)).join(', '),
      ),
    ),
  ];
  return { text: t.fallback(fitEscaped(list.map((v) => v.verb).join(', '), 1000)), blocks };
}
