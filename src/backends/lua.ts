import { createHash } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';

/** A Lua script and its SHA1, run by {@link runScript}. */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

/**
 * Scripts carry no `#!lua` shebang on purpose: Redis refuses a shebang script without the
 * `allow-oom` flag on a server at maxmemory, while a plain EVAL runs and only its writes that
 * need memory fail. The purge scripts only delete, so they run on a Redis that is out of memory.
 */
export function luaScript(lua: string): LuaScript {
  if (lua.trimStart().startsWith('#!')) throw new Error('queue-ops scripts must not use a shebang');
  // Hashed on first use: the backends define a few dozen scripts when they load, and a command
  // line runs two or three of them.
  let sha: string | undefined;
  return {
    lua,
    get sha() {
      sha ??= createHash('sha1').update(lua).digest('hex');
      return sha;
    },
  };
}

/** EVALSHA, and EVAL once when the server does not have the script (restart, SCRIPT FLUSH). */
export async function runScript(
  client: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!/NOSCRIPT/.test(String((error as Error)?.message))) throw error;
    return await client.eval(script.lua, keys.length, ...keys, ...args);
  }
}

/** One command of a pipeline that {@link execWithScripts} runs: a script call, or any other command. */
export type PipelineStep =
  | {
      script: LuaScript;
      keys: readonly string[];
      args: readonly (string | number)[];
      /**
       * The reply holds no string (integers, arrays of them): taken as Redis sends it. ioredis
       * otherwise walks and copies every reply array to turn its Buffers into strings, which for
       * the status script's 20,000 integers at 1,000 queues was a tenth of the client's work.
       */
      integers?: true;
    }
  | { command: (pipeline: ChainableCommander) => void };

type Replies = [Error | null, unknown][];

function queueStep(pipeline: ChainableCommander, step: PipelineStep, byBody: boolean): void {
  if ('command' in step) {
    step.command(pipeline);
    return;
  }
  const { script, keys, args } = step;
  if (step.integers)
    pipeline.callBuffer(
      byBody ? 'EVAL' : 'EVALSHA',
      byBody ? script.lua : script.sha,
      keys.length,
      ...keys,
      ...args,
    );
  else if (byBody) pipeline.eval(script.lua, keys.length, ...keys, ...args);
  else pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
}

/**
 * Sends the steps in one pipeline, scripts by EVALSHA. The script calls the server answers
 * NOSCRIPT (first call after a restart or SCRIPT FLUSH) are sent again by body in a second round
 * trip, which also caches them: a script that answered NOSCRIPT did not run, so this is safe for
 * scripts that write. Replies come back in step order, errors in place as ioredis gives them.
 */
export async function execWithScripts(
  client: Redis,
  steps: readonly PipelineStep[],
  exec: (pipeline: ChainableCommander) => Promise<Replies> = defaultExec,
): Promise<Replies> {
  const first = client.pipeline();
  for (const step of steps) queueStep(first, step, false);
  const replies = [...(await exec(first))];
  const missing = replies
    .map(([error], i) => (error && /NOSCRIPT/.test(error.message) ? i : -1))
    .filter((i) => i >= 0);
  if (missing.length === 0) return replies;
  const again = client.pipeline();
  for (const i of missing) queueStep(again, steps[i]!, true);
  const retried = await exec(again);
  missing.forEach((i, j) => {
    replies[i] = retried[j]!;
  });
  return replies;
}

async function defaultExec(pipeline: ChainableCommander): Promise<Replies> {
  const results = await pipeline.exec();
  if (!results) throw new Error('pipeline returned nothing');
  return results as Replies;
}

/** {@link runScript} with every bulk reply as a Buffer: big replies reach the caller undecoded. */
export async function runScriptBuffer(
  client: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<unknown> {
  try {
    return await client.callBuffer('EVALSHA', script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!/NOSCRIPT/.test(String((error as Error)?.message))) throw error;
    return await client.callBuffer('EVAL', script.lua, keys.length, ...keys, ...args);
  }
}
