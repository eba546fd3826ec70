import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands, openRawPipe, type RawPipe, replyEnd } from '../../src/backends/raw-pipe.js';
import { randomName } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * The raw pipe a purge reads job hashes through: replies handed over whole as Redis sent them, on a
 * connection opened as the ioredis client it stands beside (user, password, database), and never
 * anything half-read when it fails.
 */
const url = testRedisUrl();

describe('replyEnd', () => {
  const replies = [
    '+OK\r\n',
    '-ERR wrong number of arguments\r\n',
    ':1234\r\n',
    '$-1\r\n',
    '$0\r\n\r\n',
    '$12\r\nhello\r\nworld\r\n',
    '*-1\r\n',
    '*0\r\n',
    '*4\r\n$4\r\nname\r\n$4\r\npush\r\n$4\r\ndata\r\n$10\r\n{"a":"\r\n"}\r\n',
    '*3\r\n*2\r\n:1\r\n$-1\r\n*0\r\n$3\r\nend\r\n',
  ];

  it('finds where each kind of reply ends, at once and when it is followed by another', () => {
    for (const reply of replies) {
      const bytes = Buffer.from(reply);
      expect(replyEnd(bytes, 0, bytes.length), reply).toBe(bytes.length);
      const two = Buffer.from(reply + reply);
      expect(replyEnd(two, bytes.length, two.length), reply).toBe(two.length);
      expect(replyEnd(two, 0, two.length), reply).toBe(bytes.length);
    }
  });

  it('says a reply cut anywhere is not whole yet, and never asks for more than the whole reply', () => {
    for (const reply of replies) {
      const bytes = Buffer.from(reply);
      for (let cut = 0; cut < bytes.length; cut++) {
        const got = replyEnd(bytes.subarray(0, cut), 0, cut);
        expect(got, `${JSON.stringify(reply)} cut at ${cut}`).toBeLessThan(0);
        expect(-got, `${JSON.stringify(reply)} cut at ${cut}`).toBeGreaterThan(cut);
        expect(-got, `${JSON.stringify(reply)} cut at ${cut}`).toBeLessThanOrEqual(bytes.length);
      }
    }
  });
});

describe('a raw pipe beside an ioredis client', () => {
  const user = randomName('pipe-user');
  const password = 'pipe-secret-pw';
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(url);
    await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '+@all');
  });

  afterAll(async () => {
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  async function readyClient(): Promise<Redis> {
    const parsed = new URL(url);
    const client = new Redis({
      host: parsed.hostname,
      port: Number(parsed.port),
      username: user,
      password,
      db: 3,
      connectionName: 'queue-ops:pipe-test',
    });
    await client.ping();
    return client;
  }

  function collect(pipe: RawPipe, commands: string[][]): Promise<string[]> {
    const got: string[] = [];
    return pipe
      .send(encodeCommands(commands), commands.length, (buffer, start, end) => {
        got.push(buffer.toString('utf8', start, end));
      })
      .then(() => got);
  }

  it("connects as the client's user, to its database, named after it, and hands each reply over as sent", async () => {
    const client = await readyClient();
    const pipe = await openRawPipe(client, { name: 'queue-ops:pipe-test:read', timeoutMs: 5000 });
    try {
      expect(pipe).toBeDefined();
      const key = randomName('pipe-key');
      await client.hset(key, 'name', 'push', 'data', '{"text":"a \\"quoted\\"\\nline"}');
      const replies = await collect(pipe!, [
        ['HGETALL', key],
        ['EXISTS', key, `${key}:none`],
        ['HGETALL', `${key}:none`],
        ['GET', key],
      ]);
      expect(replies).toEqual([
        '*4\r\n$4\r\nname\r\n$4\r\npush\r\n$4\r\ndata\r\n$29\r\n{"text":"a \\"quoted\\"\\nline"}\r\n',
        ':1\r\n',
        '*0\r\n',
        '-WRONGTYPE Operation against a key holding the wrong kind of value\r\n',
      ]);
      const line = String(await admin.client('LIST'))
        .split('\n')
        .find((l) => l.includes(' name=queue-ops:pipe-test:read '));
      expect(line).toContain(`user=${user}`);
      expect(line).toContain(' db=3 ');
      // The key is in database 3, where the client is, not in the admin's 0.
      expect(await admin.exists(key)).toBe(0);
      await client.del(key);
    } finally {
      pipe?.close();
      client.disconnect();
    }
  });

  it('reads a reply of megabytes that arrives in many pieces, and replies after it', async () => {
    const client = await readyClient();
    const pipe = await openRawPipe(client, { name: 'queue-ops:pipe-test:read', timeoutMs: 5000 });
    try {
      const key = randomName('pipe-big');
      const big = 'x'.repeat(3 * 1024 * 1024);
      await client.set(key, big);
      const replies = await collect(pipe!, [
        ['GET', key],
        ['STRLEN', key],
        ['GET', key],
      ]);
      const bulk = `$${big.length}\r\n`.length + big.length + 2;
      expect(replies.map((r) => r.length)).toEqual([bulk, `:${big.length}\r\n`.length, bulk]);
      expect(replies[0]!.endsWith('xxx\r\n')).toBe(true);
      await client.del(key);
    } finally {
      pipe?.close();
      client.disconnect();
    }
  });

  it('is not opened when Redis refuses its AUTH (the password changed since the client connected)', async () => {
    const client = await readyClient();
    await admin.call('ACL', 'SETUSER', user, 'resetpass', '>another-pw');
    try {
      expect(
        await openRawPipe(client, { name: 'queue-ops:pipe-test:read', timeoutMs: 5000 }),
      ).toBeUndefined();
      // The client itself still works: it authenticated before.
      expect(await client.ping()).toBe('PONG');
    } finally {
      await admin.call('ACL', 'SETUSER', user, 'resetpass', `>${password}`);
      client.disconnect();
    }
  });

  it('fails a request whose connection is killed, and every request after it, and says it is closed', async () => {
    const client = await readyClient();
    const pipe = (await openRawPipe(client, { name: 'queue-ops:pipe-test:kill', timeoutMs: 5000 }))!;
    // Caught at once: the kill may close the pipe before the KILL's own reply is read.
    const waiting = collect(pipe, [['BLPOP', randomName('never'), '5']]).catch((error: unknown) => error);
    const id = String(await admin.client('LIST'))
      .split('\n')
      .find((l) => l.includes(' name=queue-ops:pipe-test:kill '))
      ?.match(/^id=(\d+)/)?.[1];
    expect(id).toBeDefined();
    await admin.client('KILL', 'ID', id!);
    expect(String(await waiting)).toMatch(/closed/);
    expect(pipe.closed).toBe(true);
    await expect(collect(pipe, [['PING']])).rejects.toThrow(/closed/);
    client.disconnect();
  });

  it('fails a request Redis does not answer in time, and closes', async () => {
    const client = await readyClient();
    const pipe = (await openRawPipe(client, { name: 'queue-ops:pipe-test:slow', timeoutMs: 300 }))!;
    const started = Date.now();
    await expect(collect(pipe, [['BLPOP', randomName('never'), '3']])).rejects.toThrow(/in time/);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(pipe.closed).toBe(true);
    client.disconnect();
  });
});
