import type { BullmqJobView } from '../backends/bullmq/job.js';
import { bullmqJobMessage } from '../blocks/job.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { parseTarget, resolveTarget } from './parse.js';
import { askSystem } from './timeout.js';
import type { CommandDefinition } from './types.js';

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
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function bullmqJobData(system: string, queue: string, job: BullmqJobView): BullmqJobData {
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
  };
}

/** `job <system>/<queue> <id>`: one job, from a queue's numbers down to what it is doing. */
export const jobCommand: CommandDefinition = {
  verb: 'job',
  mutating: false,
  describe: (locale) => ({ usage: messages(locale).job.usage, summary: messages(locale).job.summary }),
  async run(ctx, args, request) {
    const t = messages(request.locale).job;
    if (args.length < 2) throw new OpsError(ErrorCode.UsageError, { message: t.needsId, usage: t.usage });
    if (args.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).commands.tooManyArguments(args[2]!),
        usage: t.usage,
      });
    const target = parseTarget(args[0]!);
    if (target.queue === undefined)
      throw new OpsError(ErrorCode.UsageError, { message: t.needsId, usage: t.usage });
    const id = args[1]!;
    const { system, backend } = await resolveTarget(ctx, target);
    const queue = target.queue;
    if (!backend.job) throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'job' });
    const found = await askSystem(ctx, system, backend.job(queue, id));
    if (!found.found)
      throw new OpsError(ErrorCode.UnknownJob, { system, queue, id, looked: found.looked.join(', ') });
    return {
      ok: true,
      message: bullmqJobMessage({ system, queue, job: found.job, generatedAt: ctx.now() }, request.locale),
      data: bullmqJobData(system, queue, found.job),
      visibility: 'in_channel',
    };
  },
};
