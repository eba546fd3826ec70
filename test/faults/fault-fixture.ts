import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { readChunk } from '../../src/archive/archive.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CliRun, jsonOf, runCliInProcess } from '../actions/cli-helpers.js';

/**
 * A watched Redis that a test kills, pauses and starts again: persistent (every acknowledged write
 * survives a SIGKILL, as with `appendfsync always` in production), and restarted on the same port
 * and directory so that the bot's clients reconnect to the same data.
 */
export class FaultyRedis {
  private constructor(private server: PrivateRedis) {}

  static async start(): Promise<FaultyRedis> {
    // tmpfs where there is one: a SIGKILL loses nothing Redis wrote (the page cache outlives the
    // process), and each of the many fsyncs of `appendfsync always` then costs nothing.
    const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const dir = mkdtempSync(join(base, 'queue-ops-faulty-redis-'));
    return new FaultyRedis(await startPrivateRedis({ persist: true, dir }));
  }

  get url(): string {
    return this.server.url;
  }

  /** SIGKILL: no shutdown, no goodbye to its clients. */
  async kill(): Promise<void> {
    await this.server.kill();
  }

  /** Starts it again where it was, from its append-only file. */
  async restart(): Promise<void> {
    this.server = await startPrivateRedis({ persist: true, port: this.server.port, dir: this.server.dir });
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

export const archiveDirOf = (dir: string) => join(dir, 'archive');

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
