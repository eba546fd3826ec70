import type { RunningWork, SystemType } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { stuckMessage } from '../blocks/scale.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { resolveSystem } from '../pipeline/parse.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const stuckFacts = {
  verb: 'stuck',
  order: 250,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  describe: (locale) => ({
    usage: messages(locale).scale.usage.stuck,
    summary: messages(locale).scale.summary.stuck,
  }),
} satisfies VerbFacts;

/** The Zeus runbook's alarm threshold: `diagnosis.stuckAfterMinutes`' default, which `stuck` follows. */
export const STUCK_DEFAULT_MINUTES = 30;
const MAX_MINUTES = 7 * 24 * 60;

/** `stuck --json` data; `startedAt` is ISO 8601 UTC. Never arguments or job data. */
export interface StuckData {
  system: string;
  type: SystemType;
  minutes: number;
  work: {
    id: string;
    name: string;
    queue?: string;
    worker?: string;
    startedAt?: string;
    runningSeconds?: number;
    lockExpired?: boolean;
  }[];
}

/**
 * What counts as stuck: running at least `minutes` (0: everything running), or — BullMQ — an
 * active job whose lock expired, since no worker is working on it whatever its age. Longest first;
 * work with no known start goes last.
 */
export function selectStuck(work: readonly RunningWork[], minutes: number, now: number): RunningWork[] {
  const cutoff = now - minutes * 60_000;
  return work
    .filter(
      (w) => minutes === 0 || w.lockExpired === true || (w.startedAt !== undefined && w.startedAt <= cutoff),
    )
    .sort(
      (a, b) =>
        (a.startedAt ?? Number.POSITIVE_INFINITY) - (b.startedAt ?? Number.POSITIVE_INFINITY) ||
        a.id.localeCompare(b.id),
    );
}

/** `stuck <system> [minutes]`: work running too long, from pidbox `active` or BullMQ's active lists. */
export const stuckCommand: CommandDefinition = {
  ...stuckFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).scale;
    if (args.length === 0)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).commands.nameTarget,
        usage: t.usage.stuck,
      });
    if (args.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).commands.tooManyArguments(args[2]!),
        usage: t.usage.stuck,
      });
    let minutes = ctx.config.diagnosis?.stuckAfterMinutes ?? STUCK_DEFAULT_MINUTES;
    if (args[1] !== undefined) {
      if (!/^\d+$/.test(args[1]) || Number(args[1]) > MAX_MINUTES)
        throw new OpsError(ErrorCode.BadArgument, {
          message: t.minutesInvalid(args[1]),
          valid: t.minutesValid,
        });
      minutes = Number(args[1]);
    }
    const { system, backend } = resolveSystem(ctx, args[0]!);
    if (!backend.running)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'listRunning' });
    const running = await askSystem(ctx, system, backend.running());
    const now = ctx.now();
    const work = selectStuck(running, minutes, now.getTime());
    const data: StuckData = {
      system,
      type: backend.type,
      minutes,
      work: work.map((w) => ({
        id: w.id,
        name: w.name,
        ...(w.queue !== undefined ? { queue: w.queue } : {}),
        ...(w.worker !== undefined ? { worker: w.worker } : {}),
        ...(w.startedAt !== undefined
          ? {
              startedAt: new Date(w.startedAt).toISOString(),
              runningSeconds: Math.max(0, Math.floor((now.getTime() - w.startedAt) / 1000)),
            }
          : {}),
        ...(w.lockExpired !== undefined ? { lockExpired: w.lockExpired } : {}),
      })),
    };
    return {
      ok: true,
      message: stuckMessage({ system, type: backend.type, minutes, work, generatedAt: now }, request.locale),
      data,
      visibility: answerVisibility(stuckFacts),
    };
  },
};
