import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { auditColumns } from '../../src/store/rows.js';

const BIN = resolve(import.meta.dirname, '../../bin/queue-ops.js');

/** One finished run of the real command line. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** What `--json` prints (README: "The CLI and --json"). */
export interface CliJsonOut {
  ok: boolean;
  message: { text: string; blocks: unknown[] };
  data: Record<string, unknown> | null;
  error?: { code: string; message: string };
}

/** The request object actions answer with (ARCHITECTURE.md "Interfaces others depend on"). */
export interface RequestJson {
  id: string;
  action: string;
  target: string;
  status: string;
  requestedBy: string;
  expiresAt: string;
  preview: string;
  approvals: string[];
  requiredApprovals: number;
  result?: Record<string, unknown>;
  error?: string;
}

/** Runs `node bin/queue-ops.js …` as a child process, the way an operator's shell or a script does. */
export function runCli(args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd ?? process.cwd(),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
        timeout: options.timeoutMs ?? 30_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Stdout of a `--json` run: exactly one JSON object. */
export function jsonOf(run: CliRun): CliJsonOut {
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toHaveLength(1);
  return JSON.parse(lines[0]!) as CliJsonOut;
}

/** `data.request` of a `--json` run. */
export function requestOf(run: CliRun): RequestJson {
  const out = jsonOf(run);
  const request = (out.data as { request?: RequestJson } | null)?.request;
  if (!request) throw new Error(`no data.request in: ${run.stdout}\nstderr: ${run.stderr}`);
  return request;
}

/** A temp directory for one test's config and SQLite file. */
export function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `queue-ops-actions-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The audit columns whose contents a swap exchanges (everything but seq). */
export const AUDIT_CONTENT_COLUMNS = auditColumns.filter((c) => c !== 'seq');

export { POSTGRES_REQUIRED, POSTGRES_SHOWN, POSTGRES_URL, probePostgres } from './postgres.js';

/** `url` with `?schema=<schema>` (or `&schema=`) added. */
export function withSchema(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
}

/**
 * Runs the command line in this process (`runCli` with buffers): the same parsing, config, store,
 * guards and JSON as the binary, without a second's start-up per call. Tests that need a real
 * process (to kill it) use {@link runCli}.
 */
export async function runCliInProcess(
  args: string[],
  options: {
    cwd?: string;
    /** The environment it sees; PATH alone unless given. */
    env?: Record<string, string>;
    /** The OS account and host it reads as the kernel's (`tester` and the real host unless given). */
    osUser?: string;
    osHost?: string;
  } = {},
): Promise<CliRun> {
  const { runCli: run } = await import('../../src/transports/cli/run.js');
  const { createLogger } = await import('../../src/lib/logger.js');
  let stdout = '';
  let stderr = '';
  const code = await run({
    argv: args,
    env: options.env ?? { PATH: process.env.PATH ?? '' },
    cwd: options.cwd ?? process.cwd(),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    osUser: options.osUser ?? 'tester',
    ...(options.osHost === undefined ? {} : { osHost: options.osHost }),
    logger: createLogger({ level: 'silent' }),
  });
  return { code, stdout, stderr };
}

/**
 * Runs `node bin/queue-ops.js …` as a child (a bare environment, as a cron job has) and SIGKILLs it
 * once `reached` holds. `reached` is asked while the child is stopped (SIGSTOP), and the child is
 * killed before it runs again: it dies in the state `reached` saw, however long the look took on
 * a loaded machine, and cannot run past it (to the end, even) in between. Between two looks it
 * runs for a few ms. Throws, after killing it, when the child exits first, or when `reached`
 * never holds within `timeoutMs`, naming `what` and what it printed.
 */
export async function killCliWhen(
  args: string[],
  reached: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  child.stdout?.on('data', (chunk) => {
    said += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    said += String(chunk);
  });
  let ended = false;
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.once('exit', (_c, signal) => {
      ended = true;
      done(signal);
    }),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    child.kill('SIGSTOP');
    if ((await stoppedOrGone(child.pid!, () => ended)) === 'gone') {
      await exited;
      throw new Error(`${what} never happened: the command line exited first: ${said}`);
    }
    if (await lookedAndReached(reached)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${what} never happened: ${said}`);
    }
    child.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, 2));
  }
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

/**
 * `reached()`, where a look the stopped child's SQLite locks refused counts as "not yet": stopped
 * in the middle of a write or a checkpoint, the child can hold the WAL index's locks, and a reader
 * opening the file then gets SQLITE_PROTOCOL or SQLITE_BUSY at once (no busy handler covers the
 * first). Once the child runs on and lets them go, the next look answers.
 */
async function lookedAndReached(reached: () => boolean | Promise<boolean>): Promise<boolean> {
  try {
    return await reached();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_PROTOCOL' || code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return false;
    throw error;
  }
}

/**
 * Whether process `pid` is stopped, or has exited, once /proc says one or the other: a SIGSTOP
 * takes effect when the kernel next schedules the process, not when kill(2) returns. Without
 * /proc (not Linux) it is taken as stopped at once.
 */
async function stoppedOrGone(pid: number, exited: () => boolean): Promise<'stopped' | 'gone'> {
  for (;;) {
    if (exited()) return 'gone';
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return existsSync('/proc/self/stat') ? 'gone' : 'stopped';
    }
    // "pid (command) state …": the command may hold spaces or parentheses; the state follows the last ')'.
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    if (state === 'T') return 'stopped';
    if (state === 'Z' || state === 'X') return 'gone';
    await new Promise((r) => setImmediate(r));
  }
}
