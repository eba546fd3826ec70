import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createAudit } from '../../src/audit/audit.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { sampleRequest } from './store-contract.js';

const run = promisify(execFile);
const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const worker = join(import.meta.dirname, 'fixtures', 'sqlite-worker.ts');

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-procs-'));
  store = createSqliteStore(join(dir, 'shared.db'));
  await store.migrate();
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

// Inside one process better-sqlite3 is synchronous, so only separate processes really interleave
// on the file: this is what several bot processes sharing one SQLite file would do.
it('four processes writing one SQLite file at once keep one unbroken audit chain, run a transition once and lose no approval', async () => {
  const path = join(dir, 'shared.db');
  const request = sampleRequest({ status: 'approved', requiredApprovals: 4 });
  await store.createRequest(request);
  await store.transitionRequest(request.id, ['approved'], { status: 'pending' });
  await store.transitionRequest(request.id, ['pending'], { status: 'approved' });
  const toApprove = sampleRequest({ requiredApprovals: 4 });
  await store.createRequest(toApprove);
  const startAt = Date.now() + 2500;
  const outputs = await Promise.all(
    ['a', 'b', 'c', 'd'].map((name) =>
      run(tsx, [worker, path, name, '15', request.id, toApprove.id, String(startAt)]),
    ),
  );
  const results = outputs.map(
    (o) => JSON.parse(o.stdout.trim()) as { appended: number; transitioned: number; approved: number },
  );
  expect(results.map((r) => r.appended)).toEqual([15, 15, 15, 15]);
  expect(results.reduce((sum, r) => sum + r.transitioned, 0)).toBe(1);
  expect(await createAudit({ store, now: () => new Date() }).verify()).toEqual({ ok: true, count: 60 });
  expect((await store.getRequest(request.id))?.status).toBe('executing');
  // Each process approved exactly once (its later tries were duplicates), and no approval was lost.
  expect(results.map((r) => r.approved)).toEqual([1, 1, 1, 1]);
  expect((await store.getRequest(toApprove.id))?.approvals.map((a) => a.userId).sort()).toEqual([
    'U0a',
    'U0b',
    'U0c',
    'U0d',
  ]);
}, 60_000);
