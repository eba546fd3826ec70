import type { LevelWithSilent } from 'pino';

/**
 * `LOG_LEVEL` as pino knows it, or `fallback` when it is unset or not a level: the bot logs at
 * `info`, the command line (for people and scripts) only warnings and worse unless asked.
 */
export function parseLogLevel(value: string | undefined, fallback: LevelWithSilent): LevelWithSilent {
  const levels: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  return levels.find((level) => level === value) ?? fallback;
}
