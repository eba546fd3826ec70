import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAuditKeys } from '../../src/audit/keys.js';
import { createWitnessFile, newestWitnessHead, witnessLine } from '../../src/audit/witness.js';
import { OpsError } from '../../src/errors.js';
import { auditKeyId } from '../../src/store/audit-hash.js';
import type { AuditEntry } from '../../src/store/store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-keys-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const read = (path: string) => readFileSync(path, 'utf8');
const KEY = 'a'.repeat(64);
const OLD = 'b'.repeat(64);

describe('loadAuditKeys', () => {
  it('takes the key from QUEUE_OPS_AUDIT_KEY or audit.keyFile (trailing newline not part of it) and knows older keys', () => {
    writeFileSync(join(dir, 'key'), `${KEY}\n`);
    writeFileSync(join(dir, 'old'), OLD);
    const fromFile = loadAuditKeys({ keyFile: join(dir, 'key'), previousKeyFiles: [join(dir, 'old')] }, read);
    const id = auditKeyId(Buffer.from(KEY));
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(fromFile.current).toEqual({ id, secret: Buffer.from(KEY) });
    expect([...fromFile.known.keys()].sort()).toEqual([id, auditKeyId(Buffer.from(OLD))].sort());
    expect(loadAuditKeys({ envKey: KEY }, read).current?.id).toBe(id);
    // Both set to the same key is fine.
    expect(loadAuditKeys({ envKey: KEY, keyFile: join(dir, 'key') }, read).current?.id).toBe(id);
    expect(loadAuditKeys({ envKey: '' }, read)).toEqual({ known: new Map() });
  });

  it('names every problem at once: an unreadable file, a short key, two different keys', () => {
    writeFileSync(join(dir, 'short'), 'hunter2');
    writeFileSync(join(dir, 'key'), KEY);
    let error: unknown;
    try {
      loadAuditKeys(
        {
          envKey: OLD,
          keyFile: join(dir, 'key'),
          previousKeyFiles: [join(dir, 'missing'), join(dir, 'short')],
        },
        read,
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OpsError);
    expect((error as OpsError).code).toBe('ConfigInvalid');
    const problems = (error as OpsError).params.problems as string[];
    expect(problems).toEqual([
      expect.stringMatching(/^QUEUE_OPS_AUDIT_KEY and audit.keyFile hold different keys/),
      `audit.previousKeyFiles[0]: cannot read ${join(dir, 'missing')} (ENOENT)`,
      expect.stringMatching(/^audit.previousKeyFiles\[1\]: the audit key must be at least 32 characters/),
    ]);
    expect(JSON.stringify(problems)).not.toContain('hunter2');
  });
});

const entryAt = (seq: number): AuditEntry => ({
  seq,
  at: '2030-01-01T00:00:00.000Z',
  actorId: 'U0A',
  via: 'cli',
  action: 'command.status',
  outcome: 'ok',
  prevHash: '',
  hash: seq.toString(16).padStart(64, '0'),
  keyId: '0badc0de',
});

describe('witness file', () => {
  it('the newest head is the highest seq, whatever order processes appended in, and a torn last line is skipped', () => {
    const text = [
      witnessLine(entryAt(7)),
      witnessLine(entryAt(9)),
      witnessLine(entryAt(8)),
      '{"seq":10,"ha',
    ].join('\n');
    expect(newestWitnessHead(text, false)).toMatchObject({
      seq: 9,
      hash: entryAt(9).hash,
      keyId: '0badc0de',
    });
    // A tail read starting mid-line ignores its first piece.
    expect(newestWitnessHead(`seq":99,"hash":"x"}\n${witnessLine(entryAt(3))}\n`, true)).toMatchObject({
      seq: 3,
    });
    expect(newestWitnessHead('', false)).toBeUndefined();
  });

  it('appends one line per entry, creating its directory, and reads the head from the end of a long file', async () => {
    const witness = createWitnessFile(join(dir, 'nested', 'witness.jsonl'));
    expect(await witness.newestHead()).toBeUndefined();
    for (let seq = 1; seq <= 3000; seq++) await witness.record?.(entryAt(seq));
    const lines = readFileSync(join(dir, 'nested', 'witness.jsonl'), 'utf8')
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(3000);
    expect(JSON.parse(lines[0]!)).toEqual({
      seq: 1,
      hash: entryAt(1).hash,
      at: '2030-01-01T00:00:00.000Z',
      keyId: '0badc0de',
    });
    expect(await witness.newestHead()).toMatchObject({ seq: 3000, hash: entryAt(3000).hash });
  });
});
