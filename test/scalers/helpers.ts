import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import type { ConfigInput } from '../../src/config/schema.js';
import { createLogger } from '../../src/lib/logger.js';
import { runCli } from '../../src/transports/cli/run.js';
import { type CelerySystemInput, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';

/** One run of the command line in this process (so nock sees its HTTP), as an operator types it. */
export interface InProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function queueOps(
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<InProcessRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    env,
    cwd: process.cwd(),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    osUser: 'tester',
    logger: createLogger({ level: 'silent' }),
  });
  return { code, stdout, stderr };
}

/** What `--json` printed. */
export function json(run: InProcessRun): {
  ok: boolean;
  message: { text: string; blocks: unknown[] };
  data: Record<string, unknown> | null;
  error?: { code: string; message: string };
} {
  const lines = run.stdout.split('\n').filter((l) => l !== '');
  expect(lines, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toHaveLength(1);
  return JSON.parse(lines[0]!);
}

/** `data.request` of an action's `--json` answer. */
export function requestOf(run: InProcessRun) {
  const request = (json(run).data as { request?: Record<string, unknown> } | null)?.request;
  if (!request) throw new Error(`no data.request in ${run.stdout}\n${run.stderr}`);
  return request as {
    id: string;
    action: string;
    target: string;
    status: string;
    preview: string;
    result?: Record<string, unknown>;
    error?: string;
  };
}

/** Everything visible in a message: its blocks as JSON text. */
export function shown(run: InProcessRun): string {
  const out = json(run);
  return `${out.message.text}\n${JSON.stringify(out.message.blocks)}`;
}

export function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `queue-ops-scale-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One of a system's `workers:` groups as a config file writes it. */
export type WorkerGroupInput = NonNullable<CelerySystemInput['workers']>[string];

/** Writes `queue-ops.yml` in `dir`: its SQLite store there, {@link TEST_ROLES}, and `config`. */
export function writeConfig(dir: string, config: Omit<ConfigInput, 'store' | 'roles'>): string {
  return writeConfigFile(dir, { store: `sqlite:${join(dir, 'queue-ops.db')}`, roles: TEST_ROLES, ...config });
}

/**
 * Writes a kubeconfig in `dir` for the API server at `server` (plain HTTP, which client-node 1.x
 * speaks only with insecure-skip-tls-verify set), a bearer `token`, and `namespace` as its default.
 */
export function writeKubeconfig(
  dir: string,
  options: { server: string; token: string; namespace: string },
): string {
  const path = join(dir, 'kubeconfig.yml');
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: options.server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'queue-ops', user: { token: options.token } }],
      contexts: [
        { name: 'test', context: { cluster: 'test', user: 'queue-ops', namespace: options.namespace } },
      ],
      'current-context': 'test',
    }),
  );
  return path;
}

/** The audit entries (newest first) as `audit 50 --json` shows them. */
export async function auditEntries(config: string, env: Record<string, string | undefined>) {
  const run = await queueOps(['--config', config, '--json', 'audit', '50'], env);
  return (
    json(run).data as { entries: { action: string; outcome: string; params: Record<string, unknown> }[] }
  ).entries;
}
