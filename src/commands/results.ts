import type { ResultsReading } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { resultsMessage } from '../blocks/results.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { systemArgument } from '../pipeline/parse.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const resultsFacts = {
  verb: 'results',
  order: 50,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  readPath: true,
  describe: (locale) => ({
    usage: messages(locale).results.usage,
    summary: messages(locale).results.summary,
  }),
} satisfies VerbFacts;

/** `results --json` data: counts and bytes as numbers, `oldest.at` ISO 8601 UTC. Never a value. */
export interface ResultsData {
  system: string;
  count: number;
  withoutTtl: number;
  bytes: number;
  oldest: { at: string; id: string } | null;
  sample: ResultsReading['sample'];
  estimate: ResultsReading['estimate'];
}

/** How long the walk may take: within the system's deadline for an answer. */
const WALK_BUDGET_MS = 3_000;

/**
 * `results <system>`: the runbook's `KEYS "celery-task-meta-*"` without KEYS: a SCAN bounded in
 * time, whose answer says when it covered only part of the keyspace.
 */
export const resultsCommand: CommandDefinition = {
  ...resultsFacts,
  async run(ctx, args, request) {
    const { system, backend } = systemArgument(ctx, args, messages(request.locale).results.usage);
    if (!backend.results)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'results' });
    const reading = await askSystem(ctx, system, backend.results({ maxMillis: WALK_BUDGET_MS }));
    const data: ResultsData = {
      system,
      count: reading.count,
      withoutTtl: reading.withoutTtl,
      bytes: reading.bytes,
      oldest: reading.oldest
        ? { at: new Date(reading.oldest.at).toISOString(), id: reading.oldest.id }
        : null,
      sample: reading.sample,
      estimate: reading.estimate,
    };
    return {
      ok: true,
      message: resultsMessage({ system, reading, generatedAt: ctx.now() }, request.locale),
      data,
      visibility: answerVisibility(resultsFacts),
    };
  },
};
