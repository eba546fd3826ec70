import { queueContextFor } from '../config/queue-context.js';
import { type WhyView, whyMessage } from '../diagnosis/blocks.js';
import { diagnose } from '../diagnosis/engine.js';
import { fixCommand, fixKey } from '../diagnosis/fix-key.js';
import { gatherEvidence } from '../diagnosis/gather.js';
import { type NoteAgreement, notesAgainst } from '../diagnosis/notes.js';
import type { CauseId, CheckResult, Confidence, Diagnosis, Evidence, Verdict } from '../diagnosis/types.js';
import { evidenceText } from '../diagnosis/words.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { parseTarget, resolveTarget } from '../pipeline/parse.js';
import type { CommandContext, CommandDefinition, Request } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const whyFacts = {
  verb: 'why',
  order: 330,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  describe: (locale) => ({ usage: messages(locale).why.usage, summary: messages(locale).why.summary }),
} satisfies VerbFacts;

/** `why --json` data (issue 36 §6). Evidence lines are plain text in the request's locale. */
export interface WhyData {
  system: string;
  queue: string | null;
  verdict: Verdict;
  causes: {
    id: CauseId;
    confidence: Confidence;
    queues: string[];
    evidence: string[];
    fixes: { command: string }[];
  }[];
  checked: { id: CauseId; result: CheckResult; reason?: string }[];
}

export function whyData(evidence: Evidence, diagnosis: Diagnosis, locale: Locale): WhyData {
  return {
    system: evidence.system,
    queue: evidence.queue ?? null,
    verdict: diagnosis.verdict,
    causes: diagnosis.causes.map((c) => ({
      id: c.id,
      confidence: c.confidence,
      queues: [...c.queues],
      evidence: c.evidence.map((line) => evidenceText(line, evidence.now, locale, 'plain')),
      fixes: c.fixes.map((fix) => ({ command: fixCommand(fix) })),
    })),
    checked: diagnosis.checked.map((c) => ({
      id: c.id,
      result: c.result,
      ...(c.reason ? { reason: c.reason } : {}),
    })),
  };
}

/** Runbook notes worth showing: the queue asked about, else the queues the causes name (config order). */
function runbookNotes(ctx: CommandContext, evidence: Evidence, diagnosis: Diagnosis): NoteAgreement[] {
  const entries = ctx.config.systems.find((s) => s.name === evidence.system)?.queueContext;
  if (!entries) return [];
  const candidates =
    evidence.queue !== undefined
      ? [evidence.queue]
      : [...new Set([...diagnosis.causes.flatMap((c) => c.queues), ...entries.map((e) => e.name)])].filter(
          (q) => evidence.queues.some((live) => live.name === q),
        );
  const notes = candidates.flatMap((queue) => {
    const note = queueContextFor(entries, queue)?.notes;
    return note ? [{ queue, note }] : [];
  });
  return notesAgainst(notes.slice(0, 3), diagnosis);
}

interface WhyArgs {
  target: string;
  fix?: string;
}

function parseWhyArgs(args: readonly string[], locale: Locale): WhyArgs {
  const t = messages(locale);
  const usage = t.why.usage;
  const rest = [...args];
  let fix: string | undefined;
  const at = rest.indexOf('--fix');
  if (at >= 0) {
    fix = rest[at + 1];
    if (fix === undefined || !/^[0-9a-f]{12}$/.test(fix))
      throw new OpsError(ErrorCode.BadArgument, { message: t.why.badFix });
    rest.splice(at, 2);
  }
  if (rest.length === 0) throw new OpsError(ErrorCode.UsageError, { message: t.commands.nameTarget, usage });
  if (rest.length > 1)
    throw new OpsError(ErrorCode.UsageError, { message: t.commands.tooManyArguments(rest[1]!), usage });
  return { target: rest[0]!, ...(fix !== undefined ? { fix } : {}) };
}

/** Reads the evidence and diagnoses one system (or queue). */
export async function diagnoseTarget(ctx: CommandContext, target: string) {
  const { system, backend, queue } = await resolveTarget(ctx, parseTarget(target));
  const scalers = ctx.scalers;
  const evidence = await gatherEvidence(
    {
      config: ctx.config,
      ...(ctx.store ? { store: ctx.store } : {}),
      ...(scalers
        ? {
            groupState: async (s: string, g: string) => {
              const scaler = scalers.get(s, g);
              if (!scaler) throw new Error(`no scaler for ${s}/${g}`);
              return await scaler.state();
            },
          }
        : {}),
      now: ctx.now,
    },
    system,
    backend,
    queue,
  );
  return { evidence, diagnosis: diagnose(evidence) };
}

/**
 * `why <system>[/<queue>]`: the runbooks' causes the evidence supports, strongest first, each with
 * its queues, evidence and fixes; abstains (`unclear`) when nothing is certain, and says `healthy`
 * with the checks that found it so. With `--fix <key>` (what a fix button sends) it reads the
 * evidence again and runs the fix of that key exactly as if its command were typed: through the
 * dispatcher, so its own role, channel, policy and approval apply.
 */
export const whyCommand: CommandDefinition = {
  ...whyFacts,
  async run(ctx, args, request: Request) {
    const { target, fix } = parseWhyArgs(args, request.locale);
    const { evidence, diagnosis } = await diagnoseTarget(ctx, target);
    if (fix !== undefined) {
      const chosen = diagnosis.causes.flatMap((c) => c.fixes).find((f) => fixKey(f) === fix);
      if (!chosen || !ctx.redispatch)
        throw new OpsError(ErrorCode.BadArgument, { message: messages(request.locale).why.fixGone });
      return await ctx.redispatch(chosen.words);
    }
    const view: WhyView = {
      system: evidence.system,
      ...(evidence.queue !== undefined ? { queue: evidence.queue } : {}),
      diagnosis,
      notes: runbookNotes(ctx, evidence, diagnosis),
      now: evidence.now,
    };
    return {
      ok: true,
      message: whyMessage(view, request.locale),
      data: whyData(evidence, diagnosis, request.locale),
      visibility: answerVisibility(whyFacts),
    };
  },
};
