/**
 * `30s`, `2m`, `1h`, `1d` → milliseconds. One grammar for the config (`for`, `within`) and for
 * `snooze <id> <duration>`, so what a rule accepts is what a person can type.
 */
const DURATION = /^(\d{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const value = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return value > 0 ? value : undefined;
}

/** A TTL in the words it is typed in, parseDuration's units: the largest that divides it (`7d`, `36h`, `90m`). */
export function ttlText(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const)
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
