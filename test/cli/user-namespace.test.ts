import { describe, expect, it } from 'vitest';
import { namespaceRefusal, userNamespaceMap } from '../../src/transports/cli/user-namespace.js';

/** The kernel's own text of /proc/self/uid_map: right-aligned columns, one mapping a line. */
const WHOLE = '         0          0 4294967295\n';
const UNSHARED = '         0       1000          1\n';

describe('telling a user namespace from /proc/self/uid_map', () => {
  it('the whole-system map is no namespace; any other map is one, shown as its rows', () => {
    expect(userNamespaceMap(() => WHOLE)).toBeUndefined();
    expect(userNamespaceMap(() => UNSHARED)).toBe('0 1000 1');
    // A rootless container maps a range; the whole-system map split in two is not the whole map.
    expect(userNamespaceMap(() => '0 1000 1\n1 100000 65536\n')).toBe('0 1000 1, 1 100000 65536');
    expect(userNamespaceMap(() => '0 0 1000\n1000 1000 4294966295\n')).toBe('0 0 1000, 1000 1000 4294966295');
  });

  it('without /proc there is nothing to tell', () => {
    expect(
      userNamespaceMap(() => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      }),
    ).toBeUndefined();
  });

  it('refuses what its descriptor says changes something (approve and deny too), never a read', () => {
    for (const verb of ['pause', 'approve', 'deny', 'ack', 'rate-limit'])
      expect(namespaceRefusal([verb, 'x'], () => UNSHARED)?.code, verb).toBe('UserNamespace');
    for (const verb of ['status', 'dlq', 'pending', 'audit', 'help', 'nonsense'])
      expect(
        namespaceRefusal([verb], () => UNSHARED),
        verb,
      ).toBeUndefined();
    expect(namespaceRefusal(['pause', 'x'], () => WHOLE)).toBeUndefined();
    expect(namespaceRefusal([], () => UNSHARED)).toBeUndefined();
  });
});
