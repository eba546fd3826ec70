import { expect, it } from 'vitest';
import { messages } from '../../src/i18n/index.js';
import { jsonOf, runCliInProcess } from '../helpers/cli-run.js';
import { describePostgresFault } from './postgres-fault-bot.js';

const OUTAGE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The bot's PostgreSQL store failing under a running bot: the server restarted (every connection
 * terminated), then out of reach for 30 s behind a TCP proxy the test controls (connections reset
 * and refused). Each time: one clear line per request, nothing changed, no half-written audit
 * entry, the chain verifies, and the same running process serves requests again once it is back.
 */
describePostgresFault(
  'a running bot whose PostgreSQL store restarts or goes out of reach',
  'test/faults/postgres-outage',
  (bot) => {
    /** A pause that must not happen: one line naming the store, and the queue left as it was. */
    async function expectRefused() {
      const reply = await bot.ask('pause', 'pushizo/dispatch-ios');
      expect(reply.ok, reply.message.text).toBe(false);
      expect(reply.error?.code).toBe('StoreUnavailable');
      const line = messages('en').errors.describe({
        code: 'StoreUnavailable',
        params: reply.error!.params ?? {},
      });
      expect(line).toContain("The bot's own store is not answering");
      expect(line).toContain('nothing was changed');
      expect(reply.message.text.split('\n')).toHaveLength(1);
      expect(reply.message.text).not.toMatch(/\n\s+at |Error:/);
      expect(await bot.paused()).toBe(false);
    }

    it('serves the first request after a PostgreSQL restart', async () => {
      await bot.expectServing();
      await bot.server.restart();
      await bot.expectServing();
    });

    it('answers every request while the store is refused for 30 s in one clear line, changes nothing, and serves again once it is back', async () => {
      const before = await bot.chain();
      await bot.proxy.refuse();
      const until = Date.now() + OUTAGE_MS;
      // Five requests, 6 s apart, however long each takes to be answered: the store comes back
      // only after them (and not before 30 s), so each is answered during the outage.
      for (let request = 0; request < 5; request++) {
        if (request > 0) await sleep(6000);
        await expectRefused();
      }
      // The command line in the same outage: its actions need the store, reads still answer.
      const config = bot.config;
      const cli = await runCliInProcess([
        '--config',
        config,
        '--user',
        'U0ALICE',
        'pause',
        'pushizo/dispatch-ios',
      ]);
      expect(cli.code).toBe(1);
      expect(cli.stdout).toContain('without a store');
      expect(
        (await runCliInProcess(['--config', config, '--user', 'U0ALICE', 'status', 'pushizo'])).code,
      ).toBe(0);
      await sleep(Math.max(0, until - Date.now()));
      await bot.proxy.restore();

      const after = await bot.chain();
      expect(after).toEqual(before);
      expect(after.headIsNewest).toBe(true);
      await bot.expectServing();
      const verify = jsonOf(await runCliInProcess(['--config', config, '--json', 'audit', 'verify']));
      expect(verify.ok, JSON.stringify(verify)).toBe(true);
    }, 90_000);
  },
);
