import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditKeyId } from '../../src/store/audit-hash.js';
import { runCli as runCliIn } from '../../src/transports/cli/run.js';
import { type CliRun, jsonOf, tempDir } from '../helpers/cli-run.js';

/** The command line in this process (the same runCli the binary calls): a real store, real files. */
async function runCli(argv: string[], options: { env?: Record<string, string> } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCliIn({
    argv,
    env: { ...options.env },
    cwd: process.cwd(),
    osUser: 'tester',
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

const KEY = 'c0ffee'.repeat(8);

/** `queue-ops audit verify` as an operator runs it: the command line's runCli, a real SQLite file. */
describe('queue-ops audit verify with a key and a witness file', () => {
  let temp: ReturnType<typeof tempDir>;
  let config: string;
  const db = () => join(temp.dir, 'queue-ops.db');
  const witness = () => join(temp.dir, 'witness', 'audit.jsonl');

  beforeEach(() => {
    temp = tempDir('verify');
    config = join(temp.dir, 'queue-ops.yml');
    // The system is never contacted: verify reads only the bot's own store and the witnesses.
    writeFileSync(
      config,
      `store: sqlite:${db()}
audit:
  witnessFile: ${witness()}
systems:
  - name: pushizo
    type: bullmq
    redis: redis://127.0.0.1:1
`,
    );
  });
  afterEach(() => temp.remove());

  const verify = (env: Record<string, string> = { QUEUE_OPS_AUDIT_KEY: KEY }, json = false) =>
    runCli(['--config', config, ...(json ? ['--json'] : []), 'audit', 'verify'], { env });

  it('says the chain is keyed and which witness it checked, and fails naming the seq once the last two rows are gone and the head rewound', async () => {
    for (let i = 0; i < 4; i++) expect((await verify()).code).toBe(0);
    const ok = await verify(undefined, true);
    expect(ok.code, ok.stderr).toBe(0);
    expect(jsonOf(ok).data).toMatchObject({
      ok: true,
      count: 4,
      keyed: true,
      keyId: auditKeyId(Buffer.from(KEY)),
      witnesses: [{ kind: 'file', where: witness(), status: 'checked', seq: 4 }],
    });
    const text = await verify();
    expect(text.stdout).toContain('Audit chain verified: 5 entries');
    expect(text.stdout).toContain(`HMAC-SHA256 under audit key ${auditKeyId(Buffer.from(KEY))}`);
    expect(text.stdout).toContain(`the witness file ${witness()}: newest entry #5 matches`);
    expect(`${text.stdout}${text.stderr}`).not.toContain(KEY);

    const raw = new Database(db());
    const keep = raw.prepare('SELECT seq, hash FROM audit_log WHERE seq = 4').get() as {
      seq: number;
      hash: string;
    };
    raw.prepare('DELETE FROM audit_log WHERE seq > 4').run();
    raw.prepare('UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1').run(keep.seq, keep.hash);
    raw.close();

    const broken = await verify();
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('Audit chain broken at entry #5');
    expect(broken.stdout).toContain(
      `entries #5–#6 are missing from the store, but the witness file ${witness()}`,
    );
  }, 60_000);

  it('without a key it says the chain is unkeyed, and a keyed chain cannot be verified without its key', async () => {
    const unkeyed = await verify({});
    expect(unkeyed.code).toBe(0);
    expect(unkeyed.stdout).toContain('Unkeyed: no audit key is configured');
    expect(unkeyed.stdout).toContain('detects accidental edits, not someone who can write to the database');

    const other = join(temp.dir, 'fresh.yml');
    writeFileSync(
      other,
      `store: sqlite:${join(temp.dir, 'fresh.db')}\nsystems:\n  - { name: p, type: bullmq, redis: "redis://127.0.0.1:1" }\n`,
    );
    expect(
      (await runCli(['--config', other, 'audit', 'verify'], { env: { QUEUE_OPS_AUDIT_KEY: KEY } })).code,
    ).toBe(0);
    // Without the key nothing runs (its entry would break the chain for good), and nothing is written.
    const noKey = await runCli(['--config', other, 'audit', 'verify']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(
      /the audit chain is sealed with audit key [0-9a-f]{8} \(entry #1\) but no audit key is configured here/,
    );
    const again = await runCli(['--config', other, '--json', 'audit', 'verify'], {
      env: { QUEUE_OPS_AUDIT_KEY: KEY },
    });
    expect(jsonOf(again).data).toMatchObject({ ok: true, count: 1, witnesses: [] });
    expect(
      (await runCli(['--config', other, 'audit', 'verify'], { env: { QUEUE_OPS_AUDIT_KEY: KEY } })).stdout,
    ).toContain('No witness outside the store is configured');
  }, 60_000);

  it('a key file that cannot be read is a config error naming it, exit 2, and nothing runs', async () => {
    writeFileSync(
      config,
      `${'audit:\n  keyFile: /nonexistent/audit.key\n'}store: sqlite:${db()}\nsystems:\n  - { name: p, type: bullmq, redis: "redis://127.0.0.1:1" }\n`,
    );
    const run = await verify({});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('audit.keyFile: cannot read /nonexistent/audit.key (ENOENT)');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);
});
