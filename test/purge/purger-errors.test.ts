import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isConnectionFailure } from '../../src/backends/purger-errors.js';

/**
 * What a purge or undo takes for "Redis went away" (it then waits and resumes) versus anything
 * else (it stops and says why). A bug of ours taken for the first would be retried every 30 s for
 * ever, with the user told it goes on by itself.
 */
describe('isConnectionFailure', () => {
  it('takes ioredis connection errors and unavailable replies for Redis going away', () => {
    expect(isConnectionFailure(new Error('Connection is closed.'))).toBe(true);
    expect(
      isConnectionFailure(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      ),
    ).toBe(true);
    expect(isConnectionFailure(new Error('Command timed out'))).toBe(true);
    expect(isConnectionFailure(new ReplyError('LOADING Redis is loading the dataset in memory'))).toBe(true);
  });

  it('does not take a reply to what was sent, nor a bug of ours, for Redis going away', () => {
    expect(isConnectionFailure(new ReplyError('ERR wrong number of arguments'))).toBe(false);
    expect(isConnectionFailure(new SyntaxError('Unexpected token } in JSON at position 7'))).toBe(false);
    expect(isConnectionFailure(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(
      false,
    );
    expect(isConnectionFailure(new RangeError('Invalid array length'))).toBe(false);
  });
});
