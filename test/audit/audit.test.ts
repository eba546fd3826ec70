import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAudit } from '../../src/audit/audit.js';
import { auditEntryHash, canonicalJson } from '../../src/store/audit-hash.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { AuditEntry, Store } from '../../src/store/store.js';
import { seedAuditChain } from '../helpers/audit-chain.js';

let dir: string;
let store: Store;
let clock: Date;
const now = () => clock;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-audit-'));
  store = createSqliteStore(join(dir, 'audit.db'));
  await store.migrate();
  clock = new Date('2030-03-01T08:00:00.000Z');
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const base = {
  actorId: 'U0AYSE',
  actorName: 'ayse',
  via: 'slack',
  action: 'command.status',
  outcome: 'ok',
} as const;

describe('record', () => {
  it('stamps the entry with the clock when no time is given, and keeps a given time', async () => {
    const audit = createAudit({ store, now });
    const stamped = await audit.record(base);
    const given = await audit.record({ ...base, at: '2030-02-01T00:00:00Z' });
    expect(stamped.at).toBe('2030-03-01T08:00:00.000Z');
    expect(given.at).toBe('2030-02-01T00:00:00.000Z');
    expect(await store.listAudit()).toEqual([stamped, given]);
  });

  it('hands each stored entry to the sink, in chain order', async () => {
    const seen: number[] = [];
    const audit = createAudit({
      store,
      now,
      sink: async (entry) => {
        // A slower first delivery must not let the second overtake it.
        await new Promise((resolve) => setTimeout(resolve, entry.seq === 1 ? 30 : 0));
        seen.push(entry.seq);
      },
    });
    await audit.record(base);
    await audit.record(base);
    await audit.record(base);
    await audit.flush();
    expect(seen).toEqual([1, 2, 3]);
  });

  it('a failing sink is logged and neither loses the entry nor fails the caller', async () => {
    const warnings: unknown[] = [];
    const audit = createAudit({
      store,
      now,
      sink: async () => {
        throw new Error('channel_not_found');
      },
      logger: { warn: ((obj: unknown) => warnings.push(obj)) as never },
    });
    const entry = await audit.record({ ...base, action: 'action.pause', outcome: 'done' });
    await audit.record(base);
    await audit.flush();
    expect(entry.seq).toBe(1);
    expect((await store.listAudit()).map((e) => e.seq)).toEqual([1, 2]);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ seq: 1, err: 'channel_not_found' });
    expect(await audit.verify()).toEqual({ ok: true, count: 2 });
  });

  it('a sink that never answers does not hold up record', async () => {
    const audit = createAudit({ store, now, sink: () => new Promise<void>(() => {}) });
    const entry = await audit.record(base);
    expect(entry.seq).toBe(1);
  });

  it('rejects an entry whose time is not a date, writing nothing', async () => {
    const audit = createAudit({ store, now });
    await expect(audit.record({ ...base, at: 'yesterday' })).rejects.toMatchObject({ code: 'BadArgument' });
    expect(await store.listAudit()).toEqual([]);
  });
});

describe('verify', () => {
  it('finds a broken link on a page boundary when the page size is small', async () => {
    const audit = createAudit({ store, now, pageSize: 2 });
    for (let i = 0; i < 9; i++) await audit.record({ ...base, target: `q${i}` });
    const entries = await store.listAudit();
    // Re-chain entry 5 onto a forged predecessor with a correct self-hash: only the link betrays it.
    const forged: Omit<AuditEntry, 'hash'> = { ...entries[4]!, prevHash: 'f'.repeat(64) };
    const db = new Database(join(dir, 'audit.db'));
    db.prepare('UPDATE audit_log SET prev_hash = ?, hash = ? WHERE seq = 5').run(
      forged.prevHash,
      auditEntryHash(forged),
    );
    db.close();
    const result = await audit.verify();
    expect(result).toMatchObject({ ok: false, count: 4, firstBad: { seq: 5 } });
    if (!result.ok) expect(result.firstBad.reason).toMatch(/does not link to entry #4/);
  });
});

describe('export and recent', () => {
  it('export without --since writes every entry as canonical JSON, and --since must be a time', async () => {
    const audit = createAudit({ store, now, pageSize: 2 });
    for (let i = 0; i < 5; i++) {
      clock = new Date(clock.getTime() + 60_000);
      await audit.record({ ...base, params: { b: 1, a: 2 } });
    }
    const lines: string[] = [];
    expect(await audit.export({}, (line) => lines.push(line))).toBe(5);
    expect(lines[0]).toBe(canonicalJson((await store.listAudit({ limit: 1 }))[0]));
    expect(lines[0]).toContain('"params":{"a":2,"b":1}');
    await expect(audit.export({ since: 'last tuesday' }, () => {})).rejects.toMatchObject({
      code: 'BadArgument',
    });
  });

  it('recent(n) gives the newest n entries, newest first', async () => {
    const audit = createAudit({ store, now });
    for (let i = 0; i < 5; i++) await audit.record({ ...base, target: `q${i}` });
    expect((await audit.recent(3)).map((e) => e.seq)).toEqual([5, 4, 3]);
    expect(await audit.recent(0)).toEqual([]);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps array order and drops undefined members', () => {
    expect(canonicalJson({ b: { y: 1, x: [3, { d: 1, c: 2 }] }, a: undefined, c: null })).toBe(
      '{"b":{"x":[3,{"c":2,"d":1}],"y":1},"c":null}',
    );
  });
});

describe('verify of a long chain', () => {
  it('lets timers run while it walks 20,000 entries, and still verifies them all', async () => {
    seedAuditChain(join(dir, 'audit.db'), 20_000);
    const audit = createAudit({ store, now });
    // Stands for everything else the bot does meanwhile (Slack acks, the sweep, alerts): a
    // callback that runs on every turn of the event loop, counted in turns, not in milliseconds,
    // so the machine's speed does not matter.
    let turns = 0;
    let walking = true;
    const turn = () => {
      if (!walking) return;
      turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    try {
      expect(await audit.verify()).toEqual({ ok: true, count: 20_000 });
    } finally {
      walking = false;
    }
    // 40 pages of 500: a synchronous walk would let it run not once.
    expect(turns).toBeGreaterThan(3);
  });
});
