import { askSystem } from '../backends/timeout.js';
import { formatDuration } from '../blocks/format.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { parseTarget, resolveSystem, resolveTarget } from '../pipeline/parse.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { failTimeline, revokeTimeline } from '../verbs/workers.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, backendOfRequest, requestReply, requireApprovals } from './actions.js';

export const revokeFacts = {
  verb: 'revoke',
  order: 260,
  mutating: true,
  describe: (locale) => ({
    usage: messages(locale).scale.usage.revoke,
    summary: messages(locale).scale.summary.revoke,
  }),
  policy: 'revoke',
  timelineOutcome: revokeTimeline,
  report: 'revoke',
} satisfies VerbFacts;

export const failFacts = {
  verb: 'fail',
  order: 270,
  mutating: true,
  describe: (locale) => ({
    usage: messages(locale).scale.usage.fail,
    summary: messages(locale).scale.summary.fail,
  }),
  policy: 'fail',
  timelineOutcome: failTimeline,
  report: 'fail',
} satisfies VerbFacts;

/** Ids one revoke may name: enough for an incident, few enough to preview on one line. */
const MAX_IDS = 20;
/** A task id as Celery makes them (uuid) or as apps set them; never a second word. */
const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,199}$/;
/** Celery's ready states: a task with one of these stored as its result will not run again. */
const FINISHED = new Set(['SUCCESS', 'FAILURE', 'REVOKED']);

export interface RevokeArgs {
  system: string;
  ids: string[];
  terminate: boolean;
  signal: 'TERM' | 'KILL';
}

/** `<system> <task-id…> [--terminate] [--signal TERM|KILL]`, flags anywhere after the system. */
export function parseRevokeArgs(args: readonly string[]): RevokeArgs {
  const t = messages().scale;
  const usage = t.usage.revoke;
  let terminate = false;
  let signal: string | undefined;
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--terminate') terminate = true;
    else if (arg === '--signal' || arg.startsWith('--signal=')) {
      signal = arg === '--signal' ? args[++i] : arg.slice('--signal='.length);
      if (!signal) throw new OpsError(ErrorCode.UsageError, { message: t.signalValid, usage });
    } else if (arg.startsWith('-'))
      throw new OpsError(ErrorCode.UsageError, { message: t.unknownFlag(arg), usage });
    else words.push(arg);
  }
  const [system, ...ids] = words;
  if (!system) throw new OpsError(ErrorCode.UsageError, { message: messages().commands.nameTarget, usage });
  if (ids.length === 0) throw new OpsError(ErrorCode.UsageError, { message: t.needsTaskIds, usage });
  if (ids.length > MAX_IDS)
    throw new OpsError(ErrorCode.UsageError, {
      message: messages().commands.tooManyArguments(ids[MAX_IDS]!),
      usage,
    });
  for (const id of ids)
    if (!TASK_ID.test(id)) throw new OpsError(ErrorCode.BadArgument, { message: t.notATaskId(id) });
  const name = signal?.toUpperCase().replace(/^SIG/, '');
  if (signal !== undefined && name !== 'TERM' && name !== 'KILL')
    throw new OpsError(ErrorCode.BadArgument, { message: t.signalInvalid(signal), valid: t.signalValid });
  if (signal !== undefined && !terminate)
    throw new OpsError(ErrorCode.UsageError, { message: t.signalNeedsTerminate, usage });
  return {
    system,
    ids: [...new Set(ids)],
    terminate,
    signal: (name as 'TERM' | 'KILL' | undefined) ?? 'TERM',
  };
}

/**
 * `revoke <system> <task-id…> [--terminate] [--signal TERM|KILL]`, as `celery control revoke`:
 * previewed with where each task runs now, under policy `revoke`.
 */
export const revokeCommand: CommandDefinition = {
  ...revokeFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).scale;
    const parsed = parseRevokeArgs(args);
    const { system, backend } = resolveSystem(ctx, parsed.system);
    // Asked of the abilities, not the type: a system that can fail a job is pointed to `fail`.
    if (!backend.revoke || !backend.running)
      throw new OpsError(ErrorCode.NotSupported, {
        system,
        type: backend.type,
        what: backend.failJob ? 'revokeUseFail' : 'revoke',
      });
    const approvals = requireApprovals(ctx);
    const [running, located] = await Promise.all([
      askSystem(ctx, system, backend.running()),
      backend.locateTasks ? askSystem(ctx, system, backend.locateTasks(parsed.ids)) : undefined,
    ]);
    const now = ctx.now().getTime();
    // An id no worker, queue list or result knows is said, not silently broadcast; when none of
    // them is known there is nothing to revoke (a typo): refused before anything is asked.
    const unknown = located?.filter((l) => !l.worker && !l.queue && !l.result).map((l) => l.id) ?? [];
    if (located && unknown.length === parsed.ids.length)
      throw new OpsError(ErrorCode.UnknownTask, { system, ids: unknown });
    // Every id already ended (an old job view's Revoke pressed after the task ran): nothing is
    // left to stop, so nothing is asked, as for ids nobody knows.
    const finished = located?.filter(
      (l) =>
        !l.worker &&
        !l.queue &&
        !running.some((w) => w.id === l.id) &&
        l.result !== undefined &&
        FINISHED.has(l.result),
    );
    if (located && finished?.length === parsed.ids.length)
      throw new OpsError(ErrorCode.TaskNotRunning, {
        system,
        ids: finished.map((l) => l.id),
        states: finished.map((l) => l.result!),
      });
    const tasks = parsed.ids.map((id) => {
      const where = running.find((w) => w.id === id);
      if (where) {
        const runtime =
          where.startedAt === undefined
            ? '?'
            : formatDuration((now - where.startedAt) / 1000, request.locale);
        return t.taskRunsOn(id, where.name, where.worker ?? '?', runtime);
      }
      const at = located?.find((l) => l.id === id);
      if (!at) return t.taskNotRunning(id);
      if (at.worker) return t.taskHeldBy(id, at.worker.name, at.worker.state);
      if (at.queue === 'unacked') return t.taskDelivered(id);
      if (at.queue) return t.taskQueued(id, at.queue);
      if (at.result) return t.taskFinished(id, at.result);
      return t.taskUnknown(id);
    });
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'revoke',
      target: `${system}/${parsed.ids.join(',')}`.slice(0, 200),
      params: {
        system,
        ids: parsed.ids,
        terminate: parsed.terminate,
        signal: parsed.signal,
        ...(unknown.length > 0 ? { unknownIds: unknown } : {}),
      },
      preview: t.previewRevoke(system, tasks, parsed.terminate, parsed.signal),
    });
    return requestReply(created, request, ctx);
  },
  action: {
    name: 'revoke',
    async execute(request, _run, deps) {
      const { system, backend } = backendOfRequest(deps, request);
      if (!backend.revoke)
        throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'revoke' });
      const ids = (request.params.ids as unknown[]).map(String);
      const signal = request.params.signal === 'KILL' ? 'KILL' : 'TERM';
      return { ...(await backend.revoke(ids, { terminate: request.params.terminate === true, signal })) };
    },
  },
};

/**
 * `fail <system>/<queue> <job-id> [reason…]`: BullMQ has no revoke; an active or stalled job is
 * moved to failed the way BullMQ's own `Job.moveToFailed` does, under policy `fail`.
 */
export const failCommand: CommandDefinition = {
  ...failFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).scale;
    if (args.length < 2)
      throw new OpsError(ErrorCode.UsageError, { message: t.needsJob, usage: t.usage.fail });
    const target = parseTarget(args[0]!);
    if (target.queue === undefined)
      throw new OpsError(ErrorCode.UsageError, { message: t.needsJob, usage: t.usage.fail });
    const { system, backend } = resolveSystem(ctx, target.system);
    if (!backend.failJob || !backend.jobLock)
      throw new OpsError(ErrorCode.NotSupported, {
        system,
        type: backend.type,
        what: backend.revoke ? 'failUseRevoke' : 'fail',
      });
    const approvals = requireApprovals(ctx);
    const { queue } = await askSystem(ctx, system, resolveTarget(ctx, target));
    const id = args[1]!;
    const typed = args.slice(2).join(' ').slice(0, 500);
    const reason = typed || t.defaultReason(request.actor.name ?? request.actor.id);
    const job = await askSystem(ctx, system, backend.jobLock(queue!, id));
    if (job.state === 'unknown') throw new OpsError(ErrorCode.UnknownJob, { system, queue, id });
    if (job.state !== 'active')
      throw new OpsError(ErrorCode.JobNotActive, { system, queue, id, state: job.state });
    const lock =
      job.lockTtlMs === null
        ? t.lockExpired(job.worker)
        : t.lockHeld(job.worker, Math.ceil(job.lockTtlMs / 1000));
    const name = `${system}/${queue}`;
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'fail',
      target: `${name}/${id}`,
      // Only what names the job and a reason someone typed: two presses of the job view's Fail
      // button (the lock lapsing between them, or two operators) are then the same request and
      // wait as one (the store's pending key); the default reason is written when it runs.
      params: { system, queue, id, ...(typed ? { reason: typed } : {}) },
      preview: `${t.previewFail(name, id, job.name, job.state, reason)}; ${lock}.`,
    });
    return requestReply(created, request, ctx);
  },
  action: {
    name: 'fail',
    async execute(request, _run, deps) {
      const { system, backend } = backendOfRequest(deps, request);
      if (!backend.failJob)
        throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'fail' });
      const { queue, id } = request.params;
      const reason =
        request.params.reason === undefined
          ? messages().scale.defaultReason(request.requestedByName ?? request.requestedBy)
          : String(request.params.reason);
      return { ...(await backend.failJob(String(queue), String(id), reason)) };
    },
  },
};
