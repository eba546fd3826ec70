import { describe, expect, it } from 'vitest';
import { messages } from '../../src/i18n/index.js';
import { SCENARIOS, type Scenario } from '../helpers/why-scenarios.js';

/**
 * Issue 36 §5: each runbook cause built for real (real BullMQ workers, a real Celery worker, each
 * scenario on a Redis of its own), then `why --json` through the command line. It names that
 * cause first, strong, with evidence that has numbers; no scenario gets a strong cause it does
 * not have; the healthy one is `healthy`.
 */
async function withScenario(build: () => Promise<Scenario>, check: (s: Scenario) => Promise<void>) {
  const scenario = await build();
  try {
    await check(scenario);
  } finally {
    await scenario.close();
  }
}

describe('why names the cause each scenario has, and no other strongly', () => {
  for (const { name, cause, build } of SCENARIOS) {
    it(`${name} → ${cause}`, async () => {
      await withScenario(build, async (scenario) => {
        const { run, data, text } = await scenario.why();
        expect(run.code, run.stdout + run.stderr).toBe(0);
        const strong = data.causes.filter((c) => c.confidence === 'strong').map((c) => c.id);
        if (cause === 'healthy') {
          expect(strong, JSON.stringify(data, null, 1)).toEqual([]);
          expect(data.verdict, JSON.stringify(data, null, 1)).toBe('healthy');
          expect(data.checked.every((c) => c.result === 'not-found')).toBe(true);
          expect(text).toContain(messages('en').why.verdict.healthy);
          return;
        }
        expect(data.verdict, JSON.stringify(data, null, 1)).toBe('cause');
        expect(data.causes[0]?.id, JSON.stringify(data, null, 1)).toBe(cause);
        expect(strong, JSON.stringify(data, null, 1)).toEqual([cause]);
        const top = data.causes[0]!;
        expect(top.evidence.length).toBeGreaterThanOrEqual(2);
        expect(top.evidence.length).toBeLessThanOrEqual(4);
        expect(top.evidence.some((line) => /\d/.test(line))).toBe(true);
        expect(text).toContain(
          messages('en').why.cause[cause as keyof ReturnType<typeof messages>['why']['cause']],
        );
        expect(data.checked.find((c) => c.id === cause)?.result).toBe('found');
      });
    }, 60_000);
  }
});
