import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

/** How long a fixture lives: a fresh one for each test, or one for all the steps of a describe. */
export type FixtureLife = 'test' | 'describe';

/**
 * Registers `setUp` and `tearDown` in the calling describe: around each of its tests, or once around
 * all of them, for a scenario whose steps share what the one before left.
 */
export function setUpPer(per: FixtureLife, setUp: () => Promise<void>, tearDown: () => Promise<void>): void {
  if (per === 'test') {
    beforeEach(setUp);
    afterEach(tearDown);
  } else {
    beforeAll(setUp);
    afterAll(tearDown);
  }
}
