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
