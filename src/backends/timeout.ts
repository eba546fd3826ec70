import type { Config, SystemConfig } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';

/**
 * Rejects with `RedisUnavailable` when `work` has not settled after `ms`. The backends already
 * fail fast (connect and command timeouts); this is the backstop that keeps the "one system is
 * down, the others still report within 5 s" promise even if a backend hangs somewhere else.
 */
export async function withSystemTimeout<T>(system: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new OpsError(ErrorCode.RedisUnavailable, {
            system,
            reason: messages().commands.statusTimedOut(Math.round(ms / 100) / 10),
          }),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A system gets this long to answer before it is reported as not answering. */
export const STATUS_TIMEOUT_MS = 4500;

/** Celery's worker inspection waits `inspectTimeoutMs` on top of the Redis reads. */
export function systemTimeoutMs(system: SystemConfig | undefined): number {
  if (system?.type === 'celery') return Math.max(STATUS_TIMEOUT_MS, system.inspectTimeoutMs + 2000);
  return STATUS_TIMEOUT_MS;
}

/** `work` against one system, under that system's deadline from config. */
export function askSystem<T>(
  ctx: { config: Pick<Config, 'systems'> },
  system: string,
  work: Promise<T>,
): Promise<T> {
  return withSystemTimeout(system, systemTimeoutMs(ctx.config.systems.find((s) => s.name === system)), work);
}
