import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditVerifyResult, createAudit } from '../../src/audit/audit.js';
import { createWitnessFile } from '../../src/audit/witness.js';
import { auditKeyId } from '../../src/store/audit-hash.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_REQUIRED, POSTGRES_URL, probePostgres } from '../helpers/postgres.js';

const run = promisify(execFile);
const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const writer = join(import.meta.dirname, 'fixtures', 'audit-writer.ts');
const KEY = 'verify-while-writing-key-0123456789abcdef';
const WRITE_MS = 4000;
/** The writer appends at least this many, however slow the machine. */
const MINIMUM_APPENDS = 60;

/**
 * Another process appends (store, then witness file) in a loop while this one verifies over and
 * over, a small page at a time so the writer commits between pages. Every verify must pass: an
 * entry appended meanwhile is past the head verify read first, never "removed from the end".
 */
async function verifyWhileWriting(spec: string, dir: string): Promise<void> {
  const witnessPath = join(dir, 'witness.jsonl');
  const store: Store = await openStore(spec);
  await store.migrate();
  const secret = Buffer.from(KEY);
  const audit = createAudit({
    store,
    now: () => new Date(),
    pageSize: 7,
    keys: { current: { id: auditKeyId(secret), secret }, known: new Map([[auditKeyId(secret), secret]]) },
    witnesses: [createWitnessFile(witnessPath)],
  });
  try {
    const child = run(tsx, [writer, spec, KEY, witnessPath, String(WRITE_MS), String(MINIMUM_APPENDS)]);
    let finished = false;
    void child.finally(() => {
      finished = true;
    });
    // Wait for the writer to be running (tsx takes a moment to start).
    while (!finished && ((await store.auditHead?.())?.seq ?? 0) < 20)
      await new Promise((r) => setTimeout(r, 20));
    const results: AuditVerifyResult[] = [];
    const heads = new Set<number>();
    while (!finished) {
      results.push(await audit.verify());
      heads.add((await store.auditHead?.())?.seq ?? 0);
    }
    const { appended } = JSON.parse((await child).stdout.trim()) as { appended: number };
    expect(appended).toBeGreaterThan(50);
    // Many runs, against a head that kept moving.
    expect(results.length).toBeGreaterThan(10);
    expect(heads.size).toBeGreaterThan(5);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(await audit.verify()).toEqual({ ok: true, count: appended });
  } finally {
    await store.close();
  }
}

const unreachable = await probePostgres();

describe('audit verify while another process appends', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-verify-writing-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('on one SQLite file: no false alarm in any run', async () => {
    await verifyWhileWriting(`sqlite:${join(dir, 'shared.db')}`, dir);
  }, 60_000);

  it.skipIf(Boolean(unreachable) && !POSTGRES_REQUIRED)(
    'on PostgreSQL: no false alarm in any run',
    async () => {
      const schema = `qo_test_${randomBytes(6).toString('hex')}`;
      const url = new URL(POSTGRES_URL);
      url.searchParams.set('schema', schema);
      try {
        await verifyWhileWriting(url.toString(), dir);
      } finally {
        const raw = new pg.Client({ connectionString: POSTGRES_URL });
        await raw.connect();
        await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await raw.end();
      }
    },
    60_000,
  );
});
