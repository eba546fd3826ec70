import { Redis } from 'ioredis';
import { waitFor } from '../commands/fixture.js';

/** One command some client sent, as MONITOR reports it (name lower-cased); `lua`: run by a script. */
export interface SeenCommand {
  args: string[];
  lua: boolean;
}

/**
 * MONITOR on a Redis this test started for itself: every command any client sends, including the
 * ones a Lua script runs, so "no write" means no write, not "no key changed that we looked at".
 */
export interface RedisWatch {
  /** Every command since the last call, once MONITOR has caught up (a marker ECHO behind them). */
  settle(): Promise<SeenCommand[]>;
  /** The commands among `seen` that change data (COMMAND's `write` flag). */
  writesIn(seen: readonly SeenCommand[]): SeenCommand[];
  close(): void;
}

const MARKER = 'qo-watch-marker-';

export async function watchRedis(url: string): Promise<RedisWatch> {
  const probe = new Redis(url, { maxRetriesPerRequest: 1 });
  const commands = (await probe.call('COMMAND')) as [string, number, string[]][];
  const writeCommands = new Set(
    commands.filter((c) => c[2].includes('write')).map((c) => c[0].toLowerCase()),
  );
  const client = new Redis(url);
  const monitor = await client.monitor();
  const seen: SeenCommand[] = [];
  monitor.on('monitor', (_time: string, args: unknown[], source: string) => {
    seen.push({ args: [String(args[0]).toLowerCase(), ...args.slice(1).map(String)], lua: source === 'lua' });
  });
  let marker = 0;
  return {
    async settle() {
      marker += 1;
      const tag = `${MARKER}${marker}`;
      await probe.echo(tag);
      await waitFor('the MONITOR marker', async () =>
        seen.some((s) => s.args[0] === 'echo' && s.args[1] === tag),
      );
      return seen
        .splice(0, seen.length)
        .filter((s) => !(s.args[0] === 'echo' && s.args[1]?.startsWith(MARKER)));
    },
    writesIn: (list) => list.filter((c) => writeCommands.has(c.args[0]!)),
    close() {
      monitor.disconnect();
      client.disconnect();
      probe.disconnect();
    },
  };
}

/**
 * Celery's remote control (pidbox): asking workers anything binds a reply queue for as long as it
 * waits, and deletes it after. The only write a read of a Celery system makes, by its protocol.
 */
export const isPidboxKey = (key: string): boolean => key.includes('reply.celery.pidbox');

/** The key a write names first (enough to attribute it to a queue). */
export const keyOf = (command: SeenCommand): string => command.args[1] ?? '';

/** `SADD _kombu.binding… member` → `sadd _kombu.binding…`, for readable failure messages. */
export const brief = (command: SeenCommand): string => command.args.slice(0, 2).join(' ');
