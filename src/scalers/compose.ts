import type { ComposeGroupConfig } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { loadChildProcess } from '../lib/lazy.js';
import type { GroupState, RestartPlan, RestartTarget, ScaleReport, Scaler } from './types.js';

export interface ComposeRunnerDeps {
  /** The docker CLI; `docker` found on the PATH of `env`. */
  command?: string;
  /** The environment the CLI runs with (PATH, DOCKER_HOST…), handed in by the composition root. */
  env: Record<string, string | undefined>;
  /** `up` may pull images and start containers; default 90 s, under the 2 minutes after which an execution counts as interrupted. */
  upTimeoutMs?: number;
  /** `ps` only reads; default 15 s. */
  psTimeoutMs?: number;
  /** `restart` stops and starts every container of the service; default 90 s, as `up`. */
  restartTimeoutMs?: number;
}

/** What one `docker` run printed; stdout is only read from `ps`. */
interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when the command could not be started at all (ENOENT…). */
  spawnError?: string;
}

/** At most this much of stderr is kept for the answer; the end of it says why. */
const STDERR_KEPT = 600;

/**
 * Runs `command args…` with an argument list, never a shell: a service called `a b; rm -rf /` is
 * one argument that docker refuses, not a second command.
 */
async function run(
  command: string,
  args: readonly string[],
  env: ComposeRunnerDeps['env'],
  timeoutMs: number,
) {
  const { execFile } = await loadChildProcess();
  return await new Promise<RunResult>((resolve) => {
    execFile(
      command,
      [...args],
      { env: env as NodeJS.ProcessEnv, timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024, shell: false },
      (error, stdout, stderr) => {
        const failure = error as (NodeJS.ErrnoException & { killed?: boolean; code?: unknown }) | null;
        resolve({
          code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
          timedOut: !!failure?.killed,
          ...(failure && typeof failure.code === 'string' ? { spawnError: failure.code } : {}),
        });
      },
    );
  });
}

/** One container of `docker compose ps --format json`. */
interface PsEntry {
  Service?: string;
  State?: string;
  Name?: string;
}

/**
 * `docker compose ps --format json` prints a JSON array (Compose < 2.21) or one JSON object per
 * line (2.21 and later); both are read.
 */
export function parsePs(stdout: string): PsEntry[] {
  const text = stdout.trim();
  if (text === '') return [];
  if (text.startsWith('[')) return JSON.parse(text) as PsEntry[];
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as PsEntry);
}

export interface ComposeScalerDeps extends ComposeRunnerDeps {
  system: string;
  group: string;
  spec: ComposeGroupConfig;
}

/**
 * `docker compose -p <project> -f <file> [--env-file <file>]`: how every run names the project,
 * so `ps`, `up` and `restart` all see the same one.
 */
export function composeBase(spec: Pick<ComposeGroupConfig, 'project' | 'file' | 'envFile'>): string[] {
  return [
    'compose',
    '-p',
    spec.project,
    '-f',
    spec.file,
    ...(spec.envFile ? ['--env-file', spec.envFile] : []),
  ];
}

/**
 * A Compose service scaled with `docker compose … up -d --no-recreate --scale <service>=<n> <service>`
 * and restarted with `docker compose … restart <service>`.
 */
export function createComposeScaler(deps: ComposeScalerDeps): Scaler {
  const { spec, system, group } = deps;
  const command = deps.command ?? 'docker';
  const base = composeBase(spec);
  const label = `${system}/${group}`;

  function failed(what: string, result: RunResult): OpsError {
    const f = messages().scale.failures;
    const why = result.spawnError
      ? f.notStarted(command, result.spawnError)
      : result.timedOut
        ? f.timedOut(what)
        : f.exited(what, String(result.code));
    const stderr = result.stderr.trim().slice(-STDERR_KEPT);
    return new OpsError(ErrorCode.ScaleFailed, { target: label, reason: stderr ? `${why}: ${stderr}` : why });
  }

  async function running(): Promise<number> {
    const result = await run(
      command,
      [...base, 'ps', '--format', 'json'],
      deps.env,
      deps.psTimeoutMs ?? 15_000,
    );
    if (result.code !== 0) throw failed('docker compose ps', result);
    let entries: PsEntry[];
    try {
      entries = parsePs(result.stdout);
    } catch {
      throw new OpsError(ErrorCode.ScaleFailed, {
        target: label,
        reason: messages().scale.failures.notJson('docker compose ps --format json'),
      });
    }
    return entries.filter((e) => e.Service === spec.service && (e.State ?? '').toLowerCase() === 'running')
      .length;
  }

  async function state(): Promise<GroupState> {
    const count = await running();
    return {
      system,
      group,
      type: 'compose',
      min: spec.min,
      max: spec.max,
      targets: [{ name: spec.service, desired: count, current: count }],
    };
  }

  async function scale(replicas: number): Promise<ScaleReport> {
    const before = await running();
    const args = [
      ...base,
      'up',
      '-d',
      '--no-recreate',
      '--scale',
      `${spec.service}=${replicas}`,
      spec.service,
    ];
    const result = await run(command, args, deps.env, deps.upTimeoutMs ?? 90_000);
    if (result.code !== 0) throw failed('docker compose up', result);
    const after = await running();
    return {
      system,
      group,
      type: 'compose',
      replicas,
      targets: [{ name: spec.service, before, after, ok: after === replicas }],
    };
  }

  async function planRestart(): Promise<RestartPlan> {
    const count = await running();
    return {
      system,
      group,
      type: 'compose',
      targets: [{ name: spec.service, method: 'compose-restart', before: count }],
      ...(spec.workerNames ? { workerNames: spec.workerNames } : {}),
      timeoutSeconds: spec.restartTimeoutSeconds,
    };
  }

  async function restart(plan: RestartPlan): Promise<{ targets: RestartTarget[] }> {
    const result = await run(
      command,
      [...base, 'restart', spec.service],
      deps.env,
      deps.restartTimeoutMs ?? 90_000,
    );
    if (result.code !== 0) throw failed('docker compose restart', result);
    const after = await running();
    const before = plan.targets[0]?.before ?? null;
    return {
      targets: [
        {
          name: spec.service,
          method: 'compose-restart',
          before,
          after,
          ok: before === null || after >= before,
        },
      ],
    };
  }

  return { type: 'compose', state, scale, planRestart, restart };
}
