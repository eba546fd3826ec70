import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createApprovals } from '../../src/approvals/service.js';
import { createAudit } from '../../src/audit/audit.js';
import type { Config } from '../../src/config/schema.js';
import { OpsError } from '../../src/errors.js';
import { messages } from '../../src/i18n/index.js';
import { createPostgresStore } from '../../src/store/postgres.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_REQUIRED, POSTGRES_SHOWN, POSTGRES_URL, probePostgres } from '../helpers/postgres.js';

/**
 * Two replicas (two stores with their own connections, two approval services) asked the same
 * action on the same target at the same instant, round after round. Before the partial unique
 * index the check was read-then-insert: both read "nothing waiting" and both inserted.
 */
const ROUNDS = 40;
const unreachable = await probePostgres();
if (unreachable && POSTGRES_REQUIRED) {
  throw new Error(`PostgreSQL is required (CI or REQUIRE_POSTGRES=1) but ${POSTGRES_SHOWN}: ${unreachable}`);
}

interface Replicas {
  stores: [Store, Store];
  cleanup(): Promise<void>;
}

async function postgresReplicas(): Promise<Replicas> {
  const schema = `qo_race_${randomBytes(5).toString('hex')}`;
  const stores: [Store, Store] = [
    createPostgresStore(POSTGRES_URL, { schema }),
    createPostgresStore(POSTGRES_URL, { schema }),
  ];
  return {
    stores,
    async cleanup() {
      for (const s of stores) await s.close();
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

async function sqliteReplicas(): Promise<Replicas> {
  const dir = mkdtempSync(join(tmpdir(), 'qo-race-'));
  const stores: [Store, Store] = [
    createSqliteStore(join(dir, 'store.db')),
    createSqliteStore(join(dir, 'store.db')),
  ];
  return {
    stores,
    async cleanup() {
      for (const s of stores) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const people: Caller[] = ['U0ALICE', 'U0BOB', 'U0CAROL', 'U0DAN'].map((id) => ({
  id,
  via: 'slack',
  channel: 'C0INCIDENT',
}));

function raceOn(name: string, make: () => Promise<Replicas>) {
  describe(name, () => {
    let replicas: Replicas;
    /** Each round's target and what each of the four asking got. */
    const rounds: { target: string; outcomes: PromiseSettledResult<{ id: string }>[] }[] = [];
    const made = (outcomes: PromiseSettledResult<{ id: string }>[]) =>
      outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.id] : []));

    beforeAll(async () => {
      replicas = await make();
      await Promise.all(replicas.stores.map((s) => s.migrate()));
      const services = replicas.stores.map((store) =>
        createApprovals({
          store,
          audit: createAudit({ store, now: () => new Date() }),
          authority: { has: async () => true, has2fa: async () => true },
          config: {
            // Only pause is asked here; the policy table is the config's whole shape.
            policies: Object.fromEntries(
              ['pause', 'resume', 'retry', 'scale', 'purge', 'revoke', 'fail', 'undo'].map((a) => [
                a,
                { role: 'operator' as const, approvals: 1 },
              ]),
            ) as Config['policies'],
            approvals: { ttlMinutes: 15, require2fa: false, cliSameOsUser: 'refuse' },
          },
          executors: {},
        }),
      );
      for (let round = 0; round < ROUNDS; round++) {
        const target = `pushizo/dispatch-${round}`;
        const outcomes = await Promise.allSettled(
          people.map((actor, i) =>
            services[i % 2]!.submit({
              actor,
              action: 'pause',
              target,
              // Each asker writes the params in their own key order: still the same request.
              params:
                i % 2
                  ? { queue: `dispatch-${round}`, system: 'pushizo' }
                  : { system: 'pushizo', queue: `dispatch-${round}` },
              preview: `pause ${target}`,
            }),
          ),
        );
        rounds.push({ target, outcomes });
      }
    }, 60_000);
    afterAll(async () => {
      await replicas?.cleanup();
    });

    it(`four people asking to pause one queue at the same instant through two replicas get one request, ${ROUNDS} times out of ${ROUNDS}`, async () => {
      const duplicates = rounds.flatMap(({ target, outcomes }) =>
        made(outcomes).length !== 1 ? [`${target}: ${made(outcomes).length} requests`] : [],
      );
      expect(duplicates).toEqual([]);
      const pending = await replicas.stores[1].listRequests({ statuses: ['pending'] });
      expect(pending).toHaveLength(ROUNDS);
    });

    it('the others are told its id', () => {
      for (const { target, outcomes } of rounds) {
        const ids = made(outcomes);
        for (const o of outcomes) {
          if (o.status === 'fulfilled') continue;
          expect(o.reason).toBeInstanceOf(OpsError);
          const error = o.reason as OpsError;
          expect(error.code).toBe('DuplicateRequest');
          if (ids.length === 1) {
            expect(error.params.id).toBe(ids[0]);
            // What the person sees: one line naming the request that waits.
            expect(messages('en').errors.describe(error)).toBe(
              `The same pause of \`${target}\` is already waiting for approval as \`${ids[0]}\`: approve or deny that one; no second request was made.`,
            );
          }
        }
      }
    });

    it('nothing is half-done: exactly one request.created in the audit per request that exists', async () => {
      const pending = await replicas.stores[1].listRequests({ statuses: ['pending'] });
      const created = (await replicas.stores[0].listAudit()).filter((e) => e.action === 'request.created');
      expect(created.map((e) => e.params?.request).sort()).toEqual(pending.map((r) => r.id).sort());
    });
  });
}

raceOn('two replicas on one SQLite file', sqliteReplicas);
describe.skipIf(Boolean(unreachable))('on PostgreSQL', () => {
  raceOn(`two replicas on one PostgreSQL schema (${POSTGRES_SHOWN})`, postgresReplicas);
});
