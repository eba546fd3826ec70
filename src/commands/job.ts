import { type BullmqJobView, isBullmqJob } from '../backends/bullmq/job.js';
import { type CeleryTaskView, isCeleryTask } from '../backends/celery/task.js';
import { askSystem } from '../backends/timeout.js';
import { bullmqJobMessage, celeryTaskMessage, celeryTaskQueue } from '../blocks/job.js';
import { type QueueContextData, queueContextData } from '../blocks/queue-context.js';
import { contextOfQueue } from '../config/queue-context.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { parseTarget, resolveTarget } from '../pipeline/parse.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const jobFacts = {
  verb: 'job',
  order: 60,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  readPath: true,
  describe: (locale) => ({ usage: messages(locale).job.usage, summary: messages(locale).job.summary }),
} satisfies VerbFacts;

/**
 * `job --json` data of a BullMQ job: `data.job.{id, state, name, attempts, timestamps,
 * failedReason, stack, parent, children}` and the rest of what the view shows. Times are ISO 8601
 * UTC. Never `data` or `returnvalue`.
 */
export interface BullmqJobData {
  system: string;
  queue: string;
  job: Omit<BullmqJobView, 'timestamps' | 'dueAt'> & {
    timestamps: { added: string | null; processed: string | null; finished: string | null };
    dueAt: string | null;
  };
  /** Who owns the queue and its runbook (`queues[].owner`…), null when the config names none. */
  context: QueueContextData | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function bullmqJobData(
  system: string,
  queue: string,
  job: BullmqJobView,
  context: QueueContextData | null = null,
): BullmqJobData {
  return {
    system,
    queue,
    job: {
      ...job,
      dueAt: iso(job.dueAt),
      timestamps: {
        added: iso(job.timestamps.added),
        processed: iso(job.timestamps.processed),
        finished: iso(job.timestamps.finished),
      },
    },
    context,
  };
}

/** `job --json` data of a Celery task: `data.task.{id, state, where, worker, result}`. Never its arguments. */
export interface CeleryTaskData {
  system: string;
  task: CeleryTaskView;
  /** Who owns the task's queue (the one named, else the one it is in or came from), or null. */
  context: QueueContextData | null;
}

/**
 * `job <system>/<queue> <id>` (BullMQ) or `job <system>[/<queue>] <task-id>` (Celery): one job,
 * from a queue's numbers down to what it is doing.
 */
export const jobCommand: CommandDefinition = {
  ...jobFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).job;
    if (args.length < 2) throw new OpsError(ErrorCode.UsageError, { message: t.needsId, usage: t.usage });
    if (args.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).commands.tooManyArguments(args[2]!),
        usage: t.usage,
      });
    const target = parseTarget(args[0]!);
    const id = args[1]!;
    const { system, backend } = await resolveTarget(ctx, target);
    if (!backend.job) throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'job' });
    // A BullMQ job id means something only within its queue; a Celery task id is unique.
    if (target.queue === undefined && !backend.facts.jobIdsSystemWide)
      throw new OpsError(ErrorCode.UsageError, { message: t.needsId, usage: t.usage });
    const found = await askSystem(ctx, system, backend.job(target.queue, id));
    if (!found.found)
      throw new OpsError(ErrorCode.UnknownJob, {
        system,
        ...(target.queue === undefined ? {} : { queue: target.queue }),
        id,
        looked: found.looked.join(', '),
      });
    if (isCeleryTask(found)) {
      const task = found.job;
      const context = contextOfQueue(
        ctx.config.systems,
        system,
        target.queue ?? celeryTaskQueue(task) ?? undefined,
      );
      return {
        ok: true,
        message: celeryTaskMessage({ system, task, generatedAt: ctx.now(), context }, request.locale),
        data: { system, task, context: queueContextData(context) } satisfies CeleryTaskData,
        visibility: answerVisibility(jobFacts),
      };
    }
    // A view this command has no message for: a system whose lookup is neither BullMQ's nor Celery's.
    if (!isBullmqJob(found))
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'job' });
    const queue = target.queue!;
    const context = contextOfQueue(ctx.config.systems, system, queue);
    return {
      ok: true,
      message: bullmqJobMessage(
        { system, queue, job: found.job, generatedAt: ctx.now(), context },
        request.locale,
      ),
      data: bullmqJobData(system, queue, found.job, queueContextData(context)),
      visibility: answerVisibility(jobFacts),
    };
  },
};
