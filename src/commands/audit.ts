import { auditMessage, auditVerifyMessage } from '../audit/blocks.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { CommandDefinition, Reply } from '../pipeline/types.js';
import type { VerbFacts } from '../verbs.js';
import { visibilityFor } from './visibility.js';

export const auditFacts = {
  verb: 'audit',
  order: 150,
  mutating: false,
  answer: 'own',
  describe: (locale) => messages(locale).actions.audit,
} satisfies VerbFacts;

export const AUDIT_DEFAULT = 20;
export const AUDIT_MAX = 100;

/**
 * `audit [n]` shows recent entries; `audit verify` checks the whole hash chain (exit 1 on the
 * command line when it is broken). `audit export` is command-line only: it streams JSON lines.
 */
export const auditCommand: CommandDefinition = {
  ...auditFacts,
  async run(ctx, args, request): Promise<Reply> {
    const t = messages(request.locale);
    const usage = t.actions.audit.usage;
    const audit = ctx.audit;
    if (!audit)
      throw new OpsError(ErrorCode.NotSupported, {
        system: 'queue-ops',
        type: 'read-only',
        what: t.actions.auditNeedsStore,
      });
    if (args[0] === 'verify') {
      const report = await audit.verifyReport();
      const { result } = report;
      const data = {
        ...result,
        keyed: report.keyId !== undefined,
        ...(report.keyId ? { keyId: report.keyId } : {}),
        witnesses: report.witnesses,
      };
      const message = auditVerifyMessage(report, request.locale);
      if (result.ok) return { ok: true, message, data, visibility: 'ephemeral' };
      const line = t.audit.verify.bad(result.firstBad.seq, result.firstBad.reason, result.count);
      return {
        ok: false,
        message,
        data,
        visibility: 'ephemeral',
        error: { code: ErrorCode.AuditChainBroken, params: { message: line } },
      };
    }
    if (args[0] === 'export') {
      throw new OpsError(ErrorCode.UsageError, {
        message: t.actions.exportCliOnly,
        usage: t.actions.exportUsage,
      });
    }
    if (args.length > 1) throw new OpsError(ErrorCode.UsageError, { message: t.actions.tooMany, usage });
    let limit = AUDIT_DEFAULT;
    if (args[0] !== undefined) {
      limit = /^\d+$/.test(args[0]) ? Number(args[0]) : Number.NaN;
      if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX) {
        throw new OpsError(ErrorCode.BadArgument, {
          message: t.actions.auditCount(args[0]),
          valid: t.actions.auditCountValid(AUDIT_MAX),
        });
      }
    }
    const visibility = await visibilityFor(ctx, request);
    const entries = await audit.recent(limit, visibility.all ? {} : { visibleIn: visibility.channel });
    return {
      ok: true,
      message: auditMessage(entries, request.locale),
      data: { entries },
      visibility: 'ephemeral',
    };
  },
};
