import { formatUtc } from '../blocks/format.js';
import { context, inline, section } from '../blocks/kit.js';
import type { Message } from '../blocks/message.js';
import { type Locale, messages } from '../i18n/index.js';
import type { EscalationStore } from '../store/store.js';
import { alertJson } from './alerts.js';
import { shownValue } from './blocks.js';
import { LIMIT_LEASE, MONITOR_LEASE, type TickOutcome } from './monitor.js';
import type { DrainResult } from './outbox-contract.js';
import type { Escalation } from './runtime.js';

/** What `queue-ops monitor --once` answers (`--json`: `data` as README documents it). */
export interface OnceResult {
  ok: boolean;
  message: Message;
  data: unknown;
}

/**
 * One tick from the command line (cron, tests): the leader's jobs once (lift expired limits,
 * sample, evaluate, store), then deliver the outbox for a bounded time, and give the leases back
 * (the monitor's, and the limits' its lift took) so the next run (or the bot) can take them at once.
 */
export async function runMonitorOnce(deps: {
  escalation: Escalation;
  /** The leader's jobs once (`runLeaderJobsOnce` of src/background/jobs.ts, given by the composition root). */
  leaderJobsOnce: () => Promise<TickOutcome>;
  store: EscalationStore;
  locale: Locale;
  hasToken: boolean;
  hasChannel: boolean;
  drainMs?: number;
}): Promise<OnceResult> {
  const t = messages(deps.locale).escalation.monitor;
  let outcome: TickOutcome;
  let drained: DrainResult;
  try {
    outcome = await deps.leaderJobsOnce();
    drained = await deps.escalation.outbox.drain(deps.drainMs ?? 15_000);
  } finally {
    for (const name of [MONITOR_LEASE, LIMIT_LEASE])
      await deps.store.releaseLease(name, deps.escalation.owner).catch(() => undefined);
  }
  if (!outcome.leader) {
    const holder = outcome.holder;
    const text = t.notLeader(
      inline(holder?.owner ?? '?', 80),
      holder ? formatUtc(Date.parse(holder.expiresAt), deps.locale) : '?',
    );
    return {
      ok: true,
      message: { text, blocks: [section(text)] },
      data: {
        leader: false,
        holder: holder ?? null,
        outbox: { sent: drained.sent, pending: drained.pending },
      },
    };
  }
  const e = messages(deps.locale).escalation;
  const systems = outcome.sample.systems;
  const summary = t.summary(
    systems.length,
    systems.reduce((n, s) => n + s.queues.length, 0),
    systems.filter((s) => !s.ok).length,
  );
  const lines = [summary, t.firing(outcome.firing.length)];
  for (const alert of outcome.firing.slice(0, 30)) {
    lines.push(
      `• \`${alert.id}\` ${e.severity[alert.severity] ?? alert.severity} *${inline(alert.rule, 80)}* ${inline(alert.subject, 150)}: ` +
        e.valueLine(
          e.metric[alert.metric] ?? alert.metric,
          shownValue(alert, alert.value, deps.locale),
          alert.comparator,
          shownValue(alert, alert.threshold, deps.locale),
        ),
    );
  }
  const notes = [t.opened(outcome.opened.length), t.resolved(outcome.resolved.length)];
  const outboxLine = t.outbox(drained.sent, drained.pending);
  const extra: string[] = [];
  if (!deps.hasChannel) extra.push(t.noChannel);
  else if (!deps.hasToken) extra.push(t.noToken);
  const text = lines.join('\n');
  return {
    ok: true,
    message: {
      text: summary,
      blocks: [section(text), context(notes.join(' · '), outboxLine, ...extra)],
    },
    data: {
      leader: true,
      sampledAt: new Date(outcome.sample.at).toISOString(),
      systems: systems.map((s) => ({
        name: s.name,
        ok: s.ok,
        queues: s.queues.length,
        ...(s.error ? { error: s.error } : {}),
      })),
      firing: outcome.firing.map(alertJson),
      opened: outcome.opened.map((a) => a.id),
      resolved: outcome.resolved.map((a) => a.id),
      outbox: { sent: drained.sent, dropped: drained.dropped, pending: drained.pending },
    },
  };
}
