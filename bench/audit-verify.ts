/**
 * `npm run bench -- audit`: `audit verify` over 1,000,000 entries in a SQLite file, how long it
 * takes and the worst event-loop delay during it (what a Slack ack waiting behind it would feel).
 * Keyed (HMAC-SHA256) next to unkeyed (sha256), and the default page of 500 next to bigger pages:
 * fewer yields, longer stalls. Figures only: no assertions. Not part of `npm test`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createAudit } from '../src/audit/audit.js';
import type { AuditKeyring } from '../src/audit/keys.js';
import { auditKeyId } from '../src/store/audit-hash.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import { seedAuditChain } from '../test/helpers/audit-chain.js';

const ENTRIES = Number(process.env.BENCH_AUDIT_ENTRIES ?? 1_000_000);

interface Figures {
  label: string;
  seconds: number;
  worstMs: number;
  p99Ms: number;
  ok: boolean;
}

async function measure(label: string, path: string, keys: AuditKeyring | undefined, pageSize?: number) {
  const store = createSqliteStore(path);
  await store.migrate();
  const audit = createAudit({
    store,
    now: () => new Date(),
    ...(keys ? { keys } : {}),
    ...(pageSize ? { pageSize } : {}),
  });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = process.hrtime.bigint();
  const result = await audit.verify();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  delay.disable();
  await store.close();
  if (!result.ok || result.count !== ENTRIES)
    throw new Error(`${label}: verify said ${JSON.stringify(result)}`);
  return {
    label,
    seconds,
    worstMs: delay.max / 1e6,
    p99Ms: delay.percentile(99) / 1e6,
    ok: result.ok,
  } satisfies Figures;
}

export async function benchAuditVerify(log: (text: string) => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-audit-'));
  const secret = Buffer.from('bench-audit-key-0123456789abcdef0123456789');
  const key = { id: auditKeyId(secret), secret };
  const keys: AuditKeyring = { current: key, known: new Map([[key.id, secret]]) };
  try {
    const rows: Figures[] = [];
    for (const [name, withKey] of [
      ['unkeyed', false],
      ['keyed', true],
    ] as const) {
      const path = join(dir, `${name}.db`);
      const store = createSqliteStore(path);
      await store.migrate();
      await store.close();
      log(`seeding ${ENTRIES.toLocaleString('en')} ${name} audit entries…`);
      seedAuditChain(path, ENTRIES, withKey ? key : undefined);
      log(`verifying ${name}…`);
      rows.push(await measure(`${name}, pages of 500 (default)`, path, withKey ? keys : undefined));
      if (withKey) rows.push(await measure(`${name}, pages of 5,000`, path, keys, 5000));
    }
    const base = rows[0]!;
    const pad = (text: string, n: number) => text.padStart(n);
    const header = `${'audit verify, SQLite'.padEnd(34)}${pad('entries', 11)}${pad('seconds', 9)}${pad('entries/s', 11)}${pad('worst loop ms', 15)}${pad('p99 loop ms', 13)}${pad('time ×', 8)}`;
    const out = [
      header,
      '-'.repeat(header.length),
      ...rows.map(
        (r) =>
          `${r.label.padEnd(34)}${pad(ENTRIES.toLocaleString('en'), 11)}${pad(r.seconds.toFixed(2), 9)}` +
          `${pad(Math.round(ENTRIES / r.seconds).toLocaleString('en'), 11)}${pad(r.worstMs.toFixed(1), 15)}` +
          `${pad(r.p99Ms.toFixed(1), 13)}${pad((r.seconds / base.seconds).toFixed(2), 8)}`,
      ),
      '',
      'worst loop ms: the longest the event loop was blocked during the verify (perf_hooks',
      'monitorEventLoopDelay, 5 ms resolution): how late a Slack ack or a timer could be. Verify yields',
      'between pages, so this is about one page of reads and hashes, not the whole run; "time ×" is',
      'relative to the unkeyed default.',
    ];
    return out.join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
