import { describe, expect, it } from 'vitest';
import { errorGroupKey, groupErrors, inErrorGroup, normalizeError } from '../../src/backends/error-groups.js';
import { jobMatches } from '../../src/backends/job-filter.js';

/** Issue 36 §4: failures group by message with the variable parts normalized. */
describe('normalizeError: one group per error, whatever varies from one failure to the next', () => {
  it.each([
    ['FCM 503 Unavailable (token 17)', 'FCM 503 Unavailable (token <n>)'],
    ['db timeout after 30s', 'db timeout after <n>s'],
    ['APNs 429 Too Many Requests for device 9f2c1a7b3e4d5f60', 'APNs 429 Too Many Requests for device <hex>'],
    [
      'POST https://api.example.com/v1/users/123/orders?sig=abc failed with status 500',
      'POST https://api.example.com/<path> failed with status 500',
    ],
    ['User bob.smith+x@example.co.uk not found', 'User <email> not found'],
    ['job 3f2504e0-4f89-11d3-9a0c-0305e82c3301 lost', 'job <uuid> lost'],
    ['bad token dXk3Yz1abcDEF123:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx', 'bad token <token>'],
    ['pointer 0xdeadbeef', 'pointer <hex>'],
    ['order r7f3a9 missing', 'order <id> missing'],
    ['timed out after 10000 ms (token 12345)', 'timed out after <n> ms (token <n>)'],
    ['HTTP 404 at item 404', 'HTTP 404 at item <n>'],
    ['base64 decode failed on utf8 input', 'base64 decode failed on utf8 input'],
    ['  timeout  \n  at Worker.run (worker.js:12:3)', 'timeout'],
  ])('%s → %s', (raw, group) => {
    expect(normalizeError(raw)).toBe(group);
  });

  it('300 failures "FCM 503 Unavailable (token N)" are one group of 300, shown with a real example; counts stay exact', () => {
    const reasons = [
      ...Array.from({ length: 300 }, (_, i) => `FCM 503 Unavailable (token ${300 - i})`),
      ...Array(5).fill('timeout'),
      ...Array.from({ length: 20 }, (_, i) => `db timeout after ${i}s`),
    ];
    expect(groupErrors(reasons)).toEqual([
      { error: 'FCM 503 Unavailable (token <n>)', count: 300, example: 'FCM 503 Unavailable (token 300)' },
      { error: 'db timeout after <n>s', count: 20, example: 'db timeout after 0s' },
      { error: 'timeout', count: 5, example: 'timeout' },
    ]);
  });

  it('a group matches its own failures exactly, never a longer message that contains its text', () => {
    expect(inErrorGroup('timeout', 'timeout')).toBe(true);
    expect(inErrorGroup('db timeout after 30s', 'timeout')).toBe(false);
    expect(inErrorGroup('network timeout', 'timeout')).toBe(false);
    expect(
      jobMatches(
        { name: 'x', error: 'db timeout after 31s', at: null },
        { group: 'db timeout after <n>s' },
        0,
      ),
    ).toBe(true);
    expect(jobMatches({ name: 'x', error: 'timeout', at: null }, { group: 'db timeout after <n>s' }, 0)).toBe(
      false,
    );
    expect(errorGroupKey('timeout')).toMatch(/^[0-9a-f]{12}$/);
    expect(errorGroupKey('timeout')).not.toBe(errorGroupKey('db timeout after <n>s'));
  });
});
