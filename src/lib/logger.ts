import { type DestinationStream, type LevelWithSilent, type LogFn, pino } from 'pino';
import { scrubSecrets } from './scrub.js';

// In modules of their own so the command line can scrub its few lines and read its level without
// loading pino.
export { parseLogLevel } from './log-level.js';
export { scrubSecrets } from './scrub.js';

/**
 * What queue-ops logs through: pino's method for each level, and child loggers that add bindings.
 * Narrower than pino's own type, so that a logger which loads pino only once it has a line to
 * write (`createDeferredLogger`, for the command line) is one too.
 */
export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** Default `info`; `LOG_LEVEL` is read by the entry points, not here. */
  level?: LevelWithSilent;
  /** Literal secrets to scrub (Redis passwords, the signing secret); may grow after creation. */
  secrets?: string[];
  /** Where JSON lines go. Default: stderr, synchronously, so `--json` stdout stays clean. */
  destination?: { write(line: string): unknown };
  /** Static fields on every line. */
  base?: Record<string, unknown>;
}

/**
 * pino, object first then message, writing to stderr. Every line passes through
 * `scrubSecrets` on its way out: whatever a log call was handed (an ioredis error quoting a URL,
 * a config object, a stack trace) cannot leak a password or token.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets ?? [];
  const target = options.destination ?? pino.destination({ fd: 2, sync: true });
  const stream: DestinationStream = {
    write(line: string) {
      target.write(scrubSecrets(line, secrets));
    },
  };
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? { name: 'queue-ops' },
      // Belt and braces for the keys we know carry credentials, before the line is even built.
      redact: {
        paths: [
          'token',
          '*.token',
          'botToken',
          'appToken',
          'signingSecret',
          '*.signingSecret',
          'password',
          '*.password',
          'headers.authorization',
          '*.headers.authorization',
        ],
        censor: '***',
      },
      serializers: { err: pino.stdSerializers.err },
    },
    stream,
  );
}

/** A logger that drops everything (tests of code that needs one but is not about logging). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
