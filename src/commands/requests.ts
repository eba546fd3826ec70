import { pendingMessage, requestData } from '../approvals/blocks.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { CommandDefinition, Request } from '../pipeline/types.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, requestReply, requireApprovals } from './actions.js';
import { isVisible, visibilityFor } from './visibility.js';

export const pendingFacts = {
  verb: 'pending',
  order: 120,
  mutating: false,
  answer: 'own',
  timeline: 'look',
  describe: (locale) => messages(locale).actions.pending,
} satisfies VerbFacts;

// It runs the action: like the action itself, only in `slack.allowedChannels`.
// The approvals service checks the approver against the request's policy when the click lands;
// both are the only mutating verbs the App Home tab may send.
export const approveFacts = {
  verb: 'approve',
  order: 130,
  mutating: true,
  fromHome: true,
  describe: (locale) => messages(locale).actions.approve,
} satisfies VerbFacts;

export const denyFacts = {
  verb: 'deny',
  order: 140,
  mutating: true,
  fromHome: true,
  describe: (locale) => messages(locale).actions.deny,
} satisfies VerbFacts;

function requestId(args: string[], usage: string, locale: Request['locale']): string {
  const id = args[0];
  if (!id) throw new OpsError(ErrorCode.UsageError, { message: messages(locale).actions.needsId, usage });
  return id;
}

/** `approve <id>`: counts the caller's approval; the last one needed runs the action. */
export const approveCommand: CommandDefinition = {
  ...approveFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).actions;
    if (args.length > 1)
      throw new OpsError(ErrorCode.UsageError, { message: t.tooMany, usage: t.approve.usage });
    const id = requestId(args, t.approve.usage, request.locale);
    const updated = await requireApprovals(ctx).approve(id, actorOf(request));
    return requestReply(updated, request, ctx);
  },
};

/** `deny <id> [reason]`: closes a pending request; the requester may withdraw their own. */
export const denyCommand: CommandDefinition = {
  ...denyFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).actions;
    const id = requestId(args, t.deny.usage, request.locale);
    const reason = args.slice(1).join(' ').trim() || undefined;
    const updated = await requireApprovals(ctx).deny(id, actorOf(request), reason);
    return requestReply(updated, request, ctx);
  },
};

/** `pending`: requests waiting for approval. */
export const pendingCommand: CommandDefinition = {
  ...pendingFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).actions;
    if (args.length > 0)
      throw new OpsError(ErrorCode.UsageError, { message: t.tooMany, usage: t.pending.usage });
    const approvals = requireApprovals(ctx);
    await approvals.expireDue();
    const visibility = await visibilityFor(ctx, request);
    const rows = (await approvals.pending()).filter((r) => isVisible(visibility, r));
    return {
      ok: true,
      message: pendingMessage(rows, request.locale),
      data: { requests: rows.map(requestData) },
      visibility: 'ephemeral',
    };
  },
};
