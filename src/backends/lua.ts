import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

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
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
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
