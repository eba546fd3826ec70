import { expect, it } from 'vitest';
import { messages } from '../../src/i18n/index.js';
import { describePostgresFault } from './postgres-fault-bot.js';

const OUTAGE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The bot's PostgreSQL store behind a 30 s network partition (a TCP proxy the test controls holds
 * every connection open and passes nothing: no answer, no error). Apart from
 * postgres-outage.test.ts so the two 30 s waits overlap. A request is answered in one clear line
 * while it lasts, and the same running process serves requests once it heals.
 */
describePostgresFault(
  'a running bot whose PostgreSQL store is cut off by a network partition',
  'test/faults/postgres-partition',
  (bot) => {
    it('answers every request during a 30 s partition (nothing comes back) in one clear line, and serves again once it heals', async () => {
      await bot.expectServing();
      const before = await bot.chain();
      bot.proxy.blackhole();
      const until = Date.now() + OUTAGE_MS;
      // A request must be answered while the partition lasts, not hang until it heals: it heals
      // only after this answer (and not before 30 s), so a bot that waited for it never answers.
      const answered = await bot.ask('pause', 'pushizo/dispatch-ios');
      expect(answered.ok).toBe(false);
      expect(answered.error?.code).toBe('StoreUnavailable');
      expect(answered.message.text.split('\n')).toHaveLength(1);
      expect(
        messages('en').errors.describe({ code: 'StoreUnavailable', params: answered.error!.params ?? {} }),
      ).toMatch(
        // A pooled connection's statement gets no answer; a new connection never completes its start-up.
        /^The bot's own store is not answering \((no answer in 15 s|timeout exceeded when trying to connect)\); nothing was changed\.$/,
      );
      expect(await bot.paused()).toBe(false);
      await sleep(Math.max(0, until - Date.now()));
      await bot.proxy.restore();

      expect(await bot.chain()).toEqual(before);
      await bot.expectServing();
    }, 90_000);
  },
);
