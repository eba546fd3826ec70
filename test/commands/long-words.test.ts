import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/lib/logger.js';
import { MAX_WORD_LENGTH } from '../../src/pipeline/parse.js';
import type { Request } from '../../src/pipeline/types.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();

function request(words: string[]): Request {
  return { actor: { id: 'U0VIEWER' }, via: 'slack', channel: 'C0ANY', words, locale: 'en' };
}

describe('words longer than any name', () => {
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  function start(): App {
    // A hundred configured queues: the case where ranking "did you mean" used to cost the most.
    const queues = Array.from({ length: 100 }, (_, i) => `queue-${'x'.repeat(40)}-${i}`);
    const config = parseConfig(
      `systems:
  - name: pushizo
    type: bullmq
    redis: ${redisUrl}
    prefix: longwords
    queues: [${queues.join(', ')}]
`,
      {},
    );
    app = createApp({ config, env: {}, logger: silentLogger() });
    return app;
  }

  it('a 4,000-character queue name is refused in one line naming the limit, before any lookup', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['dlq', `pushizo/${'q'.repeat(4000)}`]));
    expect(reply.ok).toBe(false);
    expect(reply.error?.code).toBe(ErrorCode.BadArgument);
    expect(reply.message.text.split('\n')).toHaveLength(1);
    expect(reply.message.text).toContain(`at most ${MAX_WORD_LENGTH} characters`);
    // The long word is not echoed back (nor a list of queues ranked against it).
    expect(JSON.stringify(reply.message)).not.toContain('q'.repeat(300));
    expect(JSON.stringify(reply.message)).not.toContain('queue-x');
  });

  it('a long verb is refused the same way, not ranked against every verb', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['s'.repeat(MAX_WORD_LENGTH + 1)]));
    expect(reply.error?.code).toBe(ErrorCode.BadArgument);
    expect(reply.message.text).toContain(`${MAX_WORD_LENGTH + 1} characters`);
  });

  it('a word of exactly the limit is still looked up and answered as an unknown queue', async () => {
    const { dispatcher } = start();
    const reply = await dispatcher.handle(request(['dlq', `pushizo/${'q'.repeat(MAX_WORD_LENGTH - 8)}`]));
    expect(reply.error?.code).toBe(ErrorCode.UnknownQueue);
  });
});
