import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OpsError } from '../../src/errors.js';
import { createPostgresStore } from '../../src/store/postgres.js';
import type { AuditEntryInput, Store } from '../../src/store/store.js';
import { describePostgres } from '../helpers/postgres.js';
import { startProxy } from './private-postgres.js';

/** The first statement of an audit append's transaction, after BEGIN: the chain's lock. */
const HEAD_LOCK = 'SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE';

const entry = (action: string): AuditEntryInput => ({
  at: new Date().toISOString(),
  actorId: 'U0ALICE',
  via: 'cli',
  action,
  target: 'hs/webhooks',
  outcome: 'ok',
});

/**
 * The connection of a transaction is reset while the transaction holds its client between two
 * statements. pg's pool listens for errors only on idle clients, so that client's 'error' had
 * nobody to hear it: an uncaught exception, which ends the bot. The store sits behind a TCP proxy
 * the test resets (as a restart, a firewall or a proxy does); pg's own `Client#query` is wrapped
 * only to keep the append's client idle after its first statement until the reset has landed.
 */
await describePostgres(
  'a PostgreSQL store whose connection is reset in the middle of a transaction',
  (url) => {
    const schema = `qo_reset_${randomBytes(6).toString('hex')}`;
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    let store: Store;
    const uncaught: unknown[] = [];
    let heardUncaught: () => void = () => {};
    const onUncaught = (error: unknown) => {
      uncaught.push(error);
      heardUncaught();
    };

    beforeAll(async () => {
      const target = new URL(url);
      proxy = await startProxy(Number(target.port || 5432), target.hostname);
      const via = new URL(url);
      via.hostname = '127.0.0.1';
      via.port = String(proxy.port);
      store = createPostgresStore(via.toString(), { schema });
      await store.migrate();
      process.on('uncaughtException', onUncaught);
    });

    afterAll(async () => {
      process.off('uncaughtException', onUncaught);
      await store?.close();
      await proxy?.close();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });

    it('hears the reset, fails the next statement as StoreUnavailable, writes nothing, and appends again once the connection is back', async () => {
      await store.appendAudit(entry('command.status'));

      let held: (client: pg.Client) => void = () => {};
      const heldClient = new Promise<pg.Client>((resolve) => {
        held = resolve;
      });
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const query = pg.Client.prototype.query;
      let holding = true;
      // After the head lock has answered, the transaction's client is idle, checked out, and in a
      // transaction: the append's next statement waits here until the test lets it go.
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const result = (query as (...a: unknown[]) => unknown).apply(this, args);
        if (!holding || args[0] !== HEAD_LOCK || args.length !== 1) return result;
        holding = false;
        return (async () => {
          const rows = await (result as Promise<unknown>);
          held(this);
          await released;
          return rows;
        })();
      } as typeof query;
      try {
        const append = store.appendAudit(entry('action.pause')).catch((error: unknown) => error);
        const client = await heldClient;
        // pg emits 'end' once it has handled the socket's reset, 'error' first; from then on the
        // client is not queryable. An 'error' nobody hears is thrown there instead and 'end' never
        // comes: the test then goes on from the uncaught exception.
        const handled = new Promise<void>((resolve) => {
          client.once('end', () => resolve());
          heardUncaught = resolve;
        });
        await proxy.refuse();
        await handled;
        release();
        const failed = await append;
        expect(uncaught).toEqual([]);
        expect(failed).toBeInstanceOf(OpsError);
        expect(failed).toMatchObject({ code: 'StoreUnavailable' });
      } finally {
        pg.Client.prototype.query = query;
        release();
      }

      // The same store, once the connection can be made again: the half-done append left nothing.
      await proxy.restore();
      await store.appendAudit(entry('command.dlq'));
      const entries = await store.listAudit();
      expect(entries.map((e) => [e.seq, e.action])).toEqual([
        [1, 'command.status'],
        [2, 'command.dlq'],
      ]);
    });
  },
);
