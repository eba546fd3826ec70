import type { LevelWithSilent, LogFn } from 'pino';
import type { Logger, LoggerOptions } from './logger.js';

/** pino and the logger queue-ops makes of it, for the first line worth writing. */
const loadLogger = () => import('./logger.js');

type Level = Exclude<LevelWithSilent, 'silent'>;
const RANK: Record<LevelWithSilent, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

/** A logger whose lines may still be on their way; `settled()` before the process exits. */
export interface DeferredLogger extends Logger {
  /** Resolves once every line logged so far has been written (or could not be). */
  settled(): Promise<void>;
}

/**
 * `createLogger(options)`'s logger, loaded when it first has a line to write at its level. A
 * command line run that logs nothing, which is nearly every one at `warn`, never initialises
 * pino, its serializers and its redaction: a few milliseconds of each start. The lines it does
 * log wait, in order, for pino to load (a turn of the event loop in the bundle), then are written
 * as `createLogger`'s logger writes them, with that moment's time; children add their bindings
 * in the same way.
 */
export function createDeferredLogger(options: LoggerOptions): DeferredLogger {
  const threshold = RANK[options.level ?? 'info'];
  let root: Promise<Logger> | undefined;
  // Every line of every child, in the order they were logged.
  let written: Promise<void> = Promise.resolve();

  const loggerOf = (parent: () => Promise<Logger>, bindings: Record<string, unknown>) => {
    let own: Promise<Logger> | undefined;
    return () => {
      own ??= parent().then((logger) => logger.child(bindings));
      return own;
    };
  };

  const make = (target: () => Promise<Logger>): Logger => {
    const method = (level: Level): LogFn =>
      ((...args: unknown[]) => {
        if (RANK[level] < threshold) return;
        written = written
          .then(target)
          .then((logger) => (logger[level] as (...line: unknown[]) => void)(...args))
          // A line that cannot be written (pino failed to load) is not the command's failure.
          .catch(() => undefined);
      }) as LogFn;
    return {
      trace: method('trace'),
      debug: method('debug'),
      info: method('info'),
      warn: method('warn'),
      error: method('error'),
      fatal: method('fatal'),
      child: (bindings) => make(loggerOf(target, bindings)),
    };
  };

  const logger = make(() => {
    root ??= loadLogger().then(({ createLogger }) => createLogger(options));
    return root;
  });
  return Object.assign(logger, { settled: () => written });
}
