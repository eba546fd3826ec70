import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChunk } from '../../src/archive/archive.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CliRun, jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { type SystemInput, writeConfigFile } from '../helpers/config-file.js';
import { archiveDirOf, twoAdminsPurgeConfig } from '../helpers/purge-config.js';

/**
 * A watched Redis that a test kills, pauses and starts again, on the same port and directory so
 * that the bot's clients reconnect to the same data. Persistent by default (every acknowledged
 * write survives a SIGKILL, as with `appendfsync always` in production); with `snapshots`, it
 * keeps only what the last {@link FaultyRedis.snapshot} saved, as Debian's default `redis.conf`
 * (save points, no append-only file) does between two of them: killed and started again, it comes
 * back older than it was.
 */
export class FaultyRedis {
  private constructor(
    private server: PrivateRedis,
    private readonly persist: boolean,
  ) {}

  static async start(options: { snapshots?: boolean } = {}): Promise<FaultyRedis> {
    // tmpfs where there is one: a SIGKILL loses nothing Redis wrote (the page cache outlives the
    // process), and each of the many fsyncs of `appendfsync always` then costs nothing.
    const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const dir = mkdtempSync(join(base, 'queue-ops-faulty-redis-'));
    const persist = !options.snapshots;
    return new FaultyRedis(await startPrivateRedis({ persist, dir }), persist);
  }

  /** SAVE: what a snapshots-only Redis started again comes back with. */
  async snapshot(): Promise<void> {
    const client = new Redis(this.server.url, { maxRetriesPerRequest: 1 });
    try {
      await client.save();
    } finally {
      client.disconnect();
    }
  }

  get url(): string {
    return this.server.url;
  }

  /** SIGKILL: no shutdown, no goodbye to its clients. */
  async kill(): Promise<void> {
    await this.server.kill();
  }

  /** Starts it again where it was, from its append-only file (or its last snapshot). */
  async restart(): Promise<void> {
    this.server = await startPrivateRedis({
      persist: this.persist,
      port: this.server.port,
      dir: this.server.dir,
    });
  }

  pause(): void {
    process.kill(this.server.pid!, 'SIGSTOP');
  }

  resume(): void {
    process.kill(this.server.pid!, 'SIGCONT');
  }

  async stop(): Promise<void> {
    try {
      this.resume();
    } catch {
      // already gone
    }
    await this.server.stop();
    rmSync(this.server.dir, { recursive: true, force: true });
  }
}

/** Waits (polling every few ms, the purge runs in this process) until `count` chunk files exist. */
export async function chunksWritten(archive: string, count: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const chunks = () =>
    existsSync(archive) ? readdirSync(archive).filter((f) => f.startsWith('chunk-')) : [];
  while (chunks().length < count) {
    if (Date.now() > deadline) throw new Error(`the purge never wrote ${count} chunks`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Polls (every few ms) until `check` holds: a purge running in this process moves on meanwhile. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * Runs `whileDown` while a Redis is down (killed or paused just before), and brings it back
 * (`back`: restart or resume) 10 s later; fails unless `whileDown` finished first, as an answer
 * must not wait for Redis to come back. Resolves with what `whileDown` did, once Redis is back.
 */
export async function answeredBeforeBack<T>(back: () => unknown, whileDown: () => Promise<T>): Promise<T> {
  let isBack = false;
  const outage = new Promise((r) => setTimeout(r, 10_000)).then(back).then(() => {
    isBack = true;
  });
  try {
    const result = await whileDown();
    expect(isBack, 'the answer came only once Redis was back').toBe(false);
    return result;
  } finally {
    await outage;
  }
}

/** Every archived line of a purge, in chunk order, parsed. */
export async function archivedLines<T>(archive: string): Promise<T[]> {
  const out: T[] = [];
  for (const file of readdirSync(archive)
    .filter((f) => f.startsWith('chunk-'))
    .sort())
    for (const line of await readChunk(archive, file)) out.push(JSON.parse(line) as T);
  return out;
}

/**
 * What the user is told when a command fails: one line naming the system, never a stack trace nor
 * an ioredis message that names no system; the same in the message's blocks. Returns the line.
 */
export function expectOneLineNaming(run: CliRun, system: string): string {
  const out = jsonOf(run);
  const line = out.error?.message ?? '';
  expect(line, run.stdout).toContain(`\`${system}\``);
  expect(line.split('\n')).toHaveLength(1);
  const shown = [out.message.text, ...textsOf(out.message.blocks)].join('\n');
  for (const text of [line, shown, run.stderr]) {
    expect(text).not.toMatch(
      /^\s+at |MaxRetriesPerRequestError|ReplyError|AbortError|ioredis|ECONNREFUSED|Stream isn't writeable/im,
    );
    expect(text).not.toMatch(/Connection is closed|max retries/i);
  }
  return line;
}

/** Every string under a `text` key of some Block Kit blocks. */
function textsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(textsOf);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, v]) =>
    key === 'text' && typeof v === 'string' ? [v] : textsOf(v),
  );
}

export interface AuditEntry {
  seq: number;
  actorId: string;
  action: string;
  target: string;
  outcome: string;
  error?: string;
  params?: Record<string, unknown>;
}

/** The last `n` audit entries, oldest first, as `audit <n> --json` shows them. */
export async function auditEntries(config: string, n = 50): Promise<AuditEntry[]> {
  const run = await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'audit', String(n)]);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return (jsonOf(run).data as { entries: AuditEntry[] }).entries.sort((a, b) => a.seq - b.seq);
}

export { archiveDirOf };

/** A request as the SQLite store at `dir`/queue-ops.db holds it (status, parsed result, error). */
export function storedRequest(
  dir: string,
  id: string,
): { status: string; error: string | null; result: Record<string, unknown> | null } {
  const db = new Database(join(dir, 'queue-ops.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT status, error, result FROM approval_requests WHERE id = ?').get(id) as {
      status: string;
      error: string | null;
      result: string | null;
    };
    return { ...row, result: row.result ? (JSON.parse(row.result) as Record<string, unknown>) : null };
  } finally {
    db.close();
  }
}

/** What {@link describePurgeUnderRedisFault} needs to know of one backend. */
export interface PurgeFaultBackend {
  /** `BullMQ`, `Celery`: in the test's name. */
  kind: string;
  /** What the backend queues, `jobs` or `messages`: in the test's name. */
  noun: string;
  /** What undo restores, for the test's name: `every job once`. */
  restores: string;
  /** The system's name in the config, and the queue purged. */
  system: string;
  queue: string;
  /** The system's entry in the config's `systems` for a Redis at `url`. */
  systemConfig(url: string): SystemInput;
  /** Queues `count` entries in `list`. */
  seed(client: Redis, count: number): Promise<void>;
  /** The Redis list the queued entries are in, oldest last. */
  list: string;
  /** Which job a queued entry is, and which job an archived line is. */
  queuedId(entry: string): string;
  archivedId(line: Record<string, string>): string;
  /** How many chunk files the purge writes before Redis is paused. */
  chunksBeforePause: number;
  /** Takes a queued entry as a worker does: out of the list, held (and still in Redis). */
  takeByWorker(client: Redis, entry: string): Promise<void>;
  /** Queued entries that workers took, ran and acknowledged: gone from Redis altogether. */
  ranAndGone(client: Redis, entries: string[]): Promise<void>;
}

/** Entries purged; FAULT_PURGE_N=200000 runs the issue's full size (minutes on a loaded 2-core machine). */
const FAULT_PURGE_N = Number(process.env.FAULT_PURGE_N ?? 50_000);

/**
 * An approved purge, run by the approver's command line, whose Redis hangs for 10 s midway and is
 * then killed once a chunk is deleted: the approver is told in one line naming the system, Redis
 * comes back from its append-only file, the next command line finishes the purge from its archive
 * (every entry once: still queued or archived, never both, never neither), the audit trail says
 * so, and undo puts back every entry in its old order.
 */
export function describePurgeUnderRedisFault(backend: PurgeFaultBackend, N = FAULT_PURGE_N): void {
  const { system, queue, list } = backend;
  const target = `${system}/${queue}`;
  describe(`a ${backend.kind} purge of ${N.toLocaleString('en-US')} ${backend.noun} whose Redis is paused, then killed, midway`, () => {
    let redis: FaultyRedis;
    let client: Redis;
    let tmp: ReturnType<typeof tempDir>;
    let config: string;
    let before: string[];
    const as = (user: string, ...words: string[]) =>
      runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

    beforeAll(async () => {
      redis = await FaultyRedis.start();
      client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      tmp = tempDir(`fault-purge-${backend.kind.toLowerCase()}`);
      config = writeConfigFile(tmp.dir, twoAdminsPurgeConfig(tmp.dir, backend.systemConfig(redis.url)));
      await backend.seed(client, N);
      before = await client.lrange(list, 0, -1);
      expect(before).toHaveLength(N);
    }, 120_000);

    afterAll(async () => {
      client?.disconnect();
      await redis?.stop();
      tmp?.remove();
    });

    it(`waits out a 10 s pause, is stopped by the kill with one line naming ${system}, is finished once Redis is back, and undo restores ${backend.restores}`, async () => {
      const asked = requestOf(await as('U0BOB', 'purge', target));
      expect(asked.preview).toContain(`${N.toLocaleString('en-US')} jobs will be archived`);
      const archive = join(archiveDirOf(tmp.dir), asked.id);

      // The approver's command runs the purge; Redis hangs for 10 s after the first chunks, and
      // is killed after more.
      const approving = as('U0ERIN', 'approve', asked.id);
      await chunksWritten(archive, backend.chunksBeforePause);
      redis.pause();
      await new Promise((r) => setTimeout(r, 10_000));
      redis.resume();
      // Killed once a chunk is deleted, so that the kill finds some entries gone and some still queued.
      await until('a chunk is deleted', async () => (await client.llen(list)) <= N - 10_000);
      await redis.kill();
      // Started again 10 s after the kill, from its append-only file: the approver is told while
      // it is down, not once it is back.
      const approved = await answeredBeforeBack(
        () => redis.restart(),
        () => approving,
      );
      expect(approved.code, approved.stdout).toBe(1);
      expect(jsonOf(approved).error?.code).toBe('PurgeInterrupted');
      const line = expectOneLineNaming(approved, system);
      expect(line).toMatch(
        new RegExp(
          `^Redis for \`${system}\` stopped answering during the purge of \`${target}\` \\(connection (lost|refused)\\): [\\d,]+ of [\\d,]+ jobs are archived and deleted, the rest are still queued\\. The purge goes on from its archive once Redis answers again`,
        ),
      );
      expect(requestOf(approved).status).toBe('failed');

      // Back from its append-only file: what it acknowledged is there, what was deleted stays
      // deleted. The next command line that opens the store finishes the purge.
      const leftAtRestart = await client.llen(list);
      expect(leftAtRestart).toBeGreaterThan(0);
      expect(leftAtRestart).toBeLessThan(N);
      const next = await as('U0BOB', 'pending');
      expect(next.code, next.stdout + next.stderr).toBe(0);

      // Every entry once: still queued or in the archive, never both, never neither.
      const left = await client.lrange(list, 0, -1);
      const archived = (await archivedLines<Record<string, string>>(archive)).map(backend.archivedId);
      expect(left).toEqual([]);
      expect(archived).toHaveLength(N);
      expect(new Set(archived).size).toBe(N);
      expect(new Set([...archived, ...before.map(backend.queuedId)]).size).toBe(N);

      // The trail says what happened: the approved purge failed on the system's Redis, and was finished.
      const audit = await auditEntries(config);
      const purgeEntries = audit.filter((e) => e.target === target && /^(action|purge)\./.test(e.action));
      expect(purgeEntries.map((e) => [e.actorId, e.action, e.outcome, e.error ?? null])).toEqual([
        ['U0ERIN', 'action.purge', 'failed', 'PurgeInterrupted'],
        ['queue-ops', 'purge.recovered', 'finished', null],
      ]);
      expect(purgeEntries[1]!.params).toMatchObject({ request: asked.id, purged: N, archived: N });
      expect(storedRequest(tmp.dir, asked.id)).toMatchObject({
        status: 'done',
        result: { purged: N, archived: N, purgeId: asked.id },
      });

      const undo = requestOf(await as('U0BOB', 'undo', asked.id));
      const undone = await as('U0ERIN', 'approve', undo.id);
      expect(undone.code, undone.stdout).toBe(0);
      expect(requestOf(undone)).toMatchObject({ status: 'done', result: { restored: N, purgeId: asked.id } });
      expect(await client.lrange(list, 0, -1)).toEqual(before);
    }, 300_000);
  });
}
