import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBytes, formatDecimal, formatNumber } from '../../src/blocks/format.js';

/**
 * English numbers are written without Intl (loading ICU costs the command line megabytes); they
 * must read exactly as `Intl.NumberFormat('en-US')` writes them, rounding included.
 */
const numbers = fc.oneof(
  fc.double({ noNaN: false }),
  fc.integer(),
  fc.nat({ max: 2_000_000_000 }),
  // Halves and near-halves at every scale, where rounding goes wrong first.
  fc
    .tuple(fc.integer({ min: -10_000_000, max: 10_000_000 }), fc.constantFrom(1, 10, 100, 1000))
    .map(([n, scale]) => n / scale + 0.5 / scale),
  fc.constantFrom(0, -0, 0.15, 1.005, 999.95, 999_999.5, -2.5, 1e-7, 1e21, 123_456_789.45, Infinity),
);

describe('English number formatting', () => {
  it('writes every number as Intl.NumberFormat("en-US") does', () => {
    fc.assert(
      fc.property(numbers, fc.integer({ min: 0, max: 3 }), (n, digits) => {
        expect(formatNumber(n, 'en')).toBe(
          new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(n),
        );
        expect(formatDecimal(n, digits, 'en')).toBe(
          n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }),
        );
      }),
      // The constants and the near-halves above are where rounding goes wrong; 3,000 random runs
      // over them took 2.5 s where 20,000 took 17 s of a 2-core machine's suite.
      { numRuns: 3_000 },
    );
  });

  it('keeps grouping and one decimal in byte sizes, and Turkish still goes through Intl', () => {
    expect(formatNumber(48_211, 'en')).toBe('48,211');
    expect(formatBytes(1_234_567, 'en')).toBe('1.2 MB');
    expect(formatBytes(1_234_567, 'tr')).toBe('1,2 MB');
    expect(formatNumber(48_211, 'tr')).toBe('48.211');
  });
});
