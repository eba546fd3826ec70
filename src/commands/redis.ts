import type { RedisHealth, SlowlogEntry } from '../backends/redis-health.js';
import { askSystem } from '../backends/timeout.js';
import { redisHealthMessage } from '../blocks/redis-health.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { systemArgument } from '../pipeline/parse.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const redisFacts = {
  verb: 'redis',
  order: 40,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  readPath: true,
  describe: (locale) => ({ usage: messages(locale).redis.usage, summary: messages(locale).redis.summary }),
} satisfies VerbFacts;

/**
 * `redis --json` data. Byte figures are numbers of bytes; times are ISO 8601 UTC. Never a value:
 * the slow log keeps each command's name and first key, the key sample names, types and sizes.
 */
export interface RedisHealthData {
  system: string;
  version: string | null;
  role: string | null;
  memory: RedisHealth['memory'];
  clients: RedisHealth['clients'];
  slowlog: (Omit<SlowlogEntry, 'at'> & { at: string })[] | null;
  keyspace: RedisHealth['keyspace'];
  /** The biggest keys found, biggest first: every known queue key, and the sample of the rest. */
  bigKeys: RedisHealth['bigKeys'];
  /** Each known queue's keys that exist, and their bytes (measured on every call). */
  queueKeys: RedisHealth['queueKeys'];
  /** The bytes of the keys in `bigKeys` together (compare with `memory.used`). */
  explainedBytes: number;
  sample: Pick<RedisHealth['sample'], 'scanned' | 'total' | 'complete' | 'stoppedBy'>;
  persistence: Omit<RedisHealth['persistence'], 'lastSaveAt' | 'bgsaveInProgress'> & {
    lastSaveAt: string | null;
  };
}

export function redisHealthData(system: string, health: RedisHealth): RedisHealthData {
  const { persistence } = health;
  return {
    system,
    version: health.version ?? null,
    role: health.role ?? null,
    memory: health.memory,
    clients: health.clients,
    slowlog: health.slowlog?.map((entry) => ({ ...entry, at: new Date(entry.at).toISOString() })) ?? null,
    keyspace: health.keyspace,
    bigKeys: health.bigKeys,
    queueKeys: health.queueKeys,
    explainedBytes: health.explainedBytes,
    sample: {
      scanned: health.sample.scanned,
      total: health.sample.total,
      complete: health.sample.complete,
      stoppedBy: health.sample.stoppedBy,
    },
    persistence: {
      rdbLastStatus: persistence.rdbLastStatus,
      aofLastStatus: persistence.aofLastStatus,
      aofEnabled: persistence.aofEnabled,
      lastSaveAt: persistence.lastSaveAt === null ? null : new Date(persistence.lastSaveAt).toISOString(),
      changesSinceLastSave: persistence.changesSinceLastSave,
      loading: persistence.loading,
    },
  };
}

/**
 * `redis <system>`: the runbooks' `INFO`, `MEMORY STATS`, `SLOWLOG GET 10`, `INFO keyspace` and
 * `--bigkeys` in one answer. One pipelined read, then a key sample bounded in keys and time.
 */
export const redisCommand: CommandDefinition = {
  ...redisFacts,
  async run(ctx, args, request) {
    const { system, backend } = systemArgument(ctx, args, messages(request.locale).redis.usage);
    if (!backend.redisHealth)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'redisHealth' });
    const health = await askSystem(ctx, system, backend.redisHealth());
    return {
      ok: true,
      message: redisHealthMessage({ system, health, generatedAt: ctx.now() }, request.locale),
      data: redisHealthData(system, health),
      visibility: answerVisibility(redisFacts),
    };
  },
};
