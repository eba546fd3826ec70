import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ArchiveManifest,
  archivesOlderThan,
  createArchiveDir,
  LineWriter,
  readChunk,
  readManifest,
  splitBlocks,
  verifyArchive,
  writeChunk,
  writeManifest,
} from '../../src/archive/archive.js';
import { stopCompressor } from '../../src/archive/compressor.js';
import { OpsError } from '../../src/errors.js';
import { messages } from '../../src/i18n/index.js';

describe('purge archives on disk', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-archive-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function twoChunks(path: string): Promise<ArchiveManifest> {
    await createArchiveDir(path);
    const a = await writeChunk(path, 1, ['{"id":"1"}', '{"id":"2"}']);
    const b = await writeChunk(path, 2, ['{"id":"3"}']);
    const manifest: ArchiveManifest = {
      version: 1,
      purgeId: 'r-test',
      system: 'hs',
      type: 'bullmq',
      queue: 'events',
      states: ['waiting'],
      createdAt: new Date().toISOString(),
      files: [a, b].map((f) => ({ ...f, purged: f.records, skipped: [] })),
      counts: { archived: 3, purged: 3, skipped: 0 },
    };
    await writeManifest(path, manifest);
    return manifest;
  }

  it('writes gzip JSON lines and a manifest whose sha256s verify, and reads the lines back in order', async () => {
    const path = join(dir, 'r-test');
    const manifest = await twoChunks(path);
    const raw = gunzipSync(readFileSync(join(path, 'chunk-000001.jsonl.gz'))).toString();
    expect(raw).toBe('{"id":"1"}\n{"id":"2"}\n');
    const read = await readManifest(path);
    expect(read.counts).toEqual({ archived: 3, purged: 3, skipped: 0 });
    await expect(verifyArchive(path, read)).resolves.toBeUndefined();
    expect(await readChunk(path, manifest.files[0]!.name)).toEqual(['{"id":"1"}', '{"id":"2"}']);
  });

  it.runIf(process.platform === 'linux')(
    'compresses on a thread of its own at a lower CPU priority, leaving the rest of the process as it was',
    async () => {
      // Field 19 of /proc/<pid>/task/<tid>/stat: the thread's nice value.
      const niceOfEachThread = () =>
        readdirSync('/proc/self/task').map((tid) => {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
          return { tid: Number(tid), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) };
        });
      const path = join(dir, 'r-nice');
      await createArchiveDir(path);
      const lines = Array.from({ length: 2000 }, (_, i) =>
        JSON.stringify({ id: String(i), data: 'x'.repeat(100) }),
      );
      await writeChunk(path, 1, lines);
      const threads = niceOfEachThread();
      expect(threads.filter((t) => t.nice === 10)).toHaveLength(1);
      expect(threads.find((t) => t.tid === process.pid)?.nice).toBe(0);
      expect(await readChunk(path, 'chunk-000001.jsonl.gz')).toEqual(lines);
      // Stopped (as it is after a while idle), it is gone, and the next chunk makes it again.
      await stopCompressor();
      expect(niceOfEachThread().filter((t) => t.nice === 10)).toHaveLength(0);
      await writeChunk(path, 2, lines);
      expect(niceOfEachThread().filter((t) => t.nice === 10)).toHaveLength(1);
      expect(await readChunk(path, 'chunk-000002.jsonl.gz')).toEqual(lines);
    },
  );

  it('a file changed after the purge fails verification, naming that file', async () => {
    const path = join(dir, 'r-test');
    const manifest = await twoChunks(path);
    writeFileSync(join(path, 'chunk-000002.jsonl.gz'), 'tampered');
    const error = await verifyArchive(path, manifest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsError);
    const text = messages('en').errors.describe(error as OpsError);
    expect(text).toContain('chunk-000002.jsonl.gz');
    expect(text).toContain('sha256 mismatch');
  });

  it('finds archives older than the retention cutoff by their manifest time', async () => {
    await twoChunks(join(dir, 'r-old'));
    const manifest = await readManifest(join(dir, 'r-old'));
    await writeManifest(join(dir, 'r-old'), { ...manifest, createdAt: '2020-01-01T00:00:00.000Z' });
    await twoChunks(join(dir, 'r-new'));
    expect(await archivesOlderThan(dir, new Date(Date.now() - 86_400_000))).toEqual(['r-old']);
  });
});

describe('LineWriter', () => {
  it('never splits a line across two buffers, however short its estimate', () => {
    const writer = new LineWriter(16);
    const expected: string[] = [];
    const middle = Buffer.from('[one]|[two, "ü"]|[three]');
    for (let i = 0; i < 50; i++) {
      writer.write(`{"plain":${i}}\n`);
      expected.push(`{"plain":${i}}\n`);
      writer.writeAround(`{"n":${i},"f":`, middle, 6, 17, '}\n');
      expected.push(`{"n":${i},"f":[two, "ü"]}\n`);
    }
    expect(writer.blocks().length).toBeGreaterThan(1);
    expect(splitBlocks(writer.blocks()).map((l) => l.toString())).toEqual(expected);
  });

  it('writes UTF-8 text as a JSON string byte for byte as JSON.stringify does, never decoding it', () => {
    // Every control character, quotes, backslashes, multi-byte characters (U+2028 included,
    // which JSON.stringify leaves as it is), and a kombu-like envelope.
    const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
    const texts = [
      '',
      'plain',
      controls,
      '"quoted" \\back\\slash\\"',
      'ü 中文 😀 \u2028 \u2029 \u007f',
      JSON.stringify({
        body: 'W1sxLCAicHVzaCJdLCB7fV0=',
        headers: { task: 'zeus.notify', argsrepr: "(1, 'a\nb')" },
      }),
    ];
    const writer = new LineWriter(8);
    for (const text of texts)
      writer.writeJsonString(Buffer.from('{"l":"q","m":'), Buffer.from(text), Buffer.from('}\n'));
    const lines = splitBlocks(writer.blocks()).map((l) => l.toString());
    expect(lines).toEqual(texts.map((text) => `{"l":"q","m":${JSON.stringify(text)}}\n`));
    expect(lines.map((l) => (JSON.parse(l) as { m: string }).m)).toEqual(texts);
  });

  it('escapes the same wherever a byte to escape falls, and wherever the text sits in its memory', () => {
    // The text is read four bytes at a time: each character that needs escaping (and multi-byte
    // ones, which must not) at every position of a word, in texts whose length is not a multiple
    // of four, sliced out of larger buffers at every offset, as a socket read's messages are.
    const specials = [
      ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
      '"',
      '\\',
      'ü',
      '中',
      '😀',
      '\u007f',
      '!',
      '#',
      '[',
      ']',
    ];
    const texts: string[] = [];
    for (const special of specials)
      for (let at = 0; at < 9; at++)
        texts.push(`abcdefghijk`.slice(0, at) + special + 'lmnopq'.slice(0, at % 5));
    texts.push('"\\"\\\n"', '\u0001\u0002\u0003\u0004\u0005');
    const writer = new LineWriter(64);
    const head = Buffer.from('{"l":"q","m":');
    const tail = Buffer.from('}\n');
    texts.forEach((text, i) => {
      const bytes = Buffer.from(text);
      const offset = i % 4;
      const memory = Buffer.alloc(bytes.length + 8, 0x22);
      bytes.copy(memory, offset);
      writer.writeJsonString(head, memory.subarray(offset, offset + bytes.length), tail);
    });
    const lines = splitBlocks(writer.blocks()).map((l) => l.toString());
    expect(lines).toEqual(texts.map((text) => `{"l":"q","m":${JSON.stringify(text)}}\n`));
  });
});
