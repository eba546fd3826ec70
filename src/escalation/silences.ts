import { randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { suggest } from '../lib/suggest.js';
import type { Alert, Silence } from '../store/alert.js';
import { patternRegExp } from './rules.js';

/**
 * Silences (`silence <pattern> <duration> [reason]`): what a pattern matches. A pattern is
 * `[rule@]system[/queue]`, where `system` and `queue` may hold `*`:
 * - `pushizo`: every alert of pushizo, its queues' and its own (Redis memory, unreachable…);
 * - `pushizo/dispatch-*`: alerts of those queues;
 * - `no-workers@pushizo/*`: only the rule `no-workers`, on pushizo's queues; `no-workers@*` everywhere.
 */
export interface SilencePattern {
  rule?: string;
  system: string;
  queue?: string;
}

const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Splits a pattern; the `rule@` prefix is only taken when it is a rule name (no slash). */
export function splitPattern(text: string): SilencePattern {
  const at = text.indexOf('@');
  const head = at === -1 ? undefined : text.slice(0, at);
  const rule = head !== undefined && RULE_NAME.test(head) ? head : undefined;
  const target = rule === undefined ? text : text.slice(at + 1);
  const slash = target.indexOf('/');
  return {
    ...(rule === undefined ? {} : { rule }),
    system: slash === -1 ? target : target.slice(0, slash),
    ...(slash === -1 ? {} : { queue: target.slice(slash + 1) }),
  };
}

/**
 * Checks a pattern a person typed against the config: its system (unless a glob) must exist,
 * its rule too. Throws a one-line `BadArgument` or `UnknownSystem` naming what is valid.
 */
export function checkPattern(
  text: string,
  config: Pick<Config, 'systems' | 'escalation'>,
  locale: Locale,
): SilencePattern {
  const t = messages(locale).escalation.silence;
  const pattern = splitPattern(text);
  const systems = config.systems.map((s) => s.name);
  const rules = config.escalation.rules.map((r) => r.name);
  if (pattern.system === '' || pattern.queue === '' || /\s/.test(text))
    throw new OpsError(ErrorCode.BadArgument, { message: t.badPattern(text), valid: t.validPattern });
  if (pattern.rule !== undefined && !rules.includes(pattern.rule))
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.unknownRule(pattern.rule),
      valid: rules.join(', '),
    });
  if (!pattern.system.includes('*') && !systems.includes(pattern.system))
    throw new OpsError(ErrorCode.UnknownSystem, {
      system: pattern.system,
      valid: systems,
      suggestion: suggest(pattern.system, systems),
    });
  return pattern;
}

/**
 * The queue pattern a person most likely meant, among `queues`: a queue's name, or for a pattern
 * with one `*` at its end (or start) the same shape over a queue's name (`dispach-*` →
 * `dispatch-*`). Undefined when nothing is close.
 */
export function suggestQueuePattern(typed: string, queues: readonly string[]): string | undefined {
  const star = typed.indexOf('*');
  const oneStar = star !== -1 && star === typed.lastIndexOf('*');
  const shapes = new Set<string>(queues);
  if (oneStar && star === typed.length - 1)
    for (const queue of queues) for (let i = 1; i < queue.length; i++) shapes.add(`${queue.slice(0, i)}*`);
  if (oneStar && star === 0)
    for (const queue of queues) for (let i = 1; i < queue.length; i++) shapes.add(`*${queue.slice(i)}`);
  return suggest(typed, [...shapes]);
}

/** Whether a silence's pattern covers an alert (or a rule result: rule, system, queue). */
export function silenceMatches(
  pattern: string,
  alert: { rule: string; system: string; queue?: string | undefined },
): boolean {
  const p = splitPattern(pattern);
  if (p.rule !== undefined && p.rule !== alert.rule) return false;
  if (!patternRegExp(p.system).test(alert.system)) return false;
  if (p.queue === undefined) return true;
  return alert.queue !== undefined && patternRegExp(p.queue).test(alert.queue);
}

/** The first silence in force that covers the alert, if any. */
export function silenceFor(
  silences: readonly Silence[],
  alert: { rule: string; system: string; queue?: string | undefined },
): Silence | undefined {
  return silences.find((s) => silenceMatches(s.pattern, alert));
}

/** The alerts of `alerts` a silence covers (what `silence` reports right away). */
export function silencedBy(silence: Silence, alerts: readonly Alert[]): Alert[] {
  return alerts.filter((a) => silenceMatches(silence.pattern, a));
}

export function newSilenceId(): string {
  return `s-${randomBytes(4).toString('hex')}`;
}
