import { spawn } from 'node:child_process';

export interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the demo entry (`npm run demo`) as a child process, the way a user starts it. By default
 * it inherits this environment without `REDIS_URL` (so the demo starts its own redis-server),
 * plus `env`; with `inheritEnv: false` it sees only `env`.
 */
export function runDemo(
  args: string[],
  options: { env?: Record<string, string | undefined>; inheritEnv?: boolean } = {},
): Promise<DemoRun> {
  const env =
    options.inheritEnv === false ? options.env : { ...process.env, REDIS_URL: undefined, ...options.env };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'src/demo/main.ts', ...args], {
      cwd: process.cwd(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
