import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, TLSSocket } from 'node:tls';
import type { Redis } from 'ioredis';

/**
 * A second connection to the Redis a ready ioredis client is connected to, that hands each reply
 * over as the bytes Redis sent (RESP), never parsed into objects. For reads of thousands of
 * replies a call (a purge reading every job's hash): ioredis builds a command object, a promise
 * and a Buffer per field of each, about 25 µs a job against the 2 µs Redis spends on it, which is
 * why those reads ran inside Lua, where converting each reply into Lua values cost Redis three
 * times what the command itself does.
 *
 * It connects to the socket the client has (the master a sentinel named, a node of a cluster the
 * client was routed to) with the client's credentials, TLS and database. Anything it cannot do as
 * that client would (a TLS setup it cannot copy, an AUTH refused, a reply it did not expect) makes
 * it unusable, never wrong: callers fall back to their ioredis path, which then gives the error
 * the user sees if Redis is really gone.
 */
export interface RawPipe {
  /**
   * Sends `request` (RESP commands, see {@link encodeCommands}) and calls `onReply` with each of
   * its `replies` replies whole, in order: `buffer[start, end)` is one reply, valid only during
   * the call. Rejects if the connection fails or times out (then the pipe is closed), or with the
   * first error `onReply` threw, once every reply of the request has been read.
   */
  send(
    request: Buffer,
    replies: number,
    onReply: (buffer: Buffer, start: number, end: number) => void,
  ): Promise<void>;
  readonly closed: boolean;
  close(): void;
}

/** Commands as RESP, one buffer for all: what a pipeline of them writes on the socket. */
export function encodeCommands(commands: readonly (readonly string[])[]): Buffer {
  let text = '';
  for (const command of commands) {
    text += `*${command.length}\r\n`;
    for (const arg of command) text += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  }
  return Buffer.from(text);
}

const CR = 13;
const ASTERISK = 42;
const DOLLAR = 36;
const MINUS = 45;

/** The integer between `from` (after a reply's type byte) and `to` (its CR). */
export function respInteger(buffer: Buffer, from: number, to: number): number {
  let at = from;
  const negative = buffer[at] === MINUS;
  if (negative) at++;
  let n = 0;
  for (; at < to; at++) n = n * 10 + buffer[at]! - 48;
  return negative ? -n : n;
}

/**
 * Where the reply starting at `pos` ends (the index after it), or, when `buffer[pos, length)` does
 * not hold all of it yet, minus the least length the buffer must reach before it is worth looking
 * again (a bulk's length is known once its header is in: a reply of megabytes is not scanned
 * again at every socket read).
 */
export function replyEnd(buffer: Buffer, pos: number, length: number): number {
  let at = pos;
  let remaining = 1;
  while (remaining > 0) {
    if (at >= length) return -(length + 1);
    const type = buffer[at]!;
    // The header's line, scanned here: a call into Buffer.indexOf per field cost more than the field.
    let lineEnd = at + 1;
    while (lineEnd < length && buffer[lineEnd] !== CR) lineEnd++;
    if (lineEnd + 1 >= length) return -(length + 1);
    remaining--;
    if (type === DOLLAR) {
      const size = respInteger(buffer, at + 1, lineEnd);
      at = lineEnd + 2;
      if (size >= 0) {
        if (at + size + 2 > length) return -(at + size + 2);
        at += size + 2;
      }
    } else if (type === ASTERISK) {
      const count = respInteger(buffer, at + 1, lineEnd);
      at = lineEnd + 2;
      if (count > 0) remaining += count;
    } else {
      at = lineEnd + 2;
    }
  }
  return at;
}

/** The text of an error reply (`-ERR …`) at `start`, without its type byte. */
export function errorText(buffer: Buffer, start: number, end: number): string {
  return buffer.toString('utf8', start + 1, Math.max(start + 1, end - 2));
}

interface Request {
  replies: number;
  got: number;
  onReply: (buffer: Buffer, start: number, end: number) => void;
  failure: unknown;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A raw pipe beside `client` (ready), named `name` in CLIENT LIST; undefined when it cannot be
 * opened as that client is (see {@link RawPipe}). `timeoutMs` bounds the connection and each
 * request, as the client's command timeout bounds its commands.
 */
export async function openRawPipe(
  client: Redis,
  options: { name: string; timeoutMs: number },
): Promise<RawPipe | undefined> {
  const stream = (client as unknown as { stream?: Socket }).stream;
  const settings = client.options;
  if (client.status !== 'ready' || !stream) return undefined;
  let socket: Socket;
  try {
    if (settings.path) {
      if (settings.tls) return undefined;
      socket = connectTcp({ path: settings.path });
    } else {
      const host = stream.remoteAddress;
      const port = stream.remotePort;
      if (!host || !port) return undefined;
      if (stream instanceof TLSSocket) {
        if (!settings.tls) return undefined;
        socket = connectTls({
          ...settings.tls,
          host,
          port,
          servername: settings.tls.servername ?? settings.host,
        });
      } else {
        socket = connectTcp({ host, port });
      }
    }
  } catch {
    return undefined;
  }
  socket.setNoDelay(true);
  // The client's own connection keeps the process alive while a purge runs; this one must never
  // keep a command line from exiting once its work is done.
  socket.unref();
  // A Redis that accepted the client a moment ago and hangs now is not waited on for long here:
  // the caller reads through its client instead, which waits as long as its commands may.
  const { pipe, setTimeoutMs } = rawPipeOn(socket, Math.min(options.timeoutMs, OPEN_TIMEOUT_MS));
  const hello: string[][] = [];
  if (settings.password)
    hello.push(
      settings.username ? ['AUTH', settings.username, settings.password] : ['AUTH', settings.password],
    );
  if (settings.db) hello.push(['SELECT', String(settings.db)]);
  hello.push(['CLIENT', 'SETNAME', options.name]);
  try {
    await pipe.send(encodeCommands(hello), hello.length, (buffer, start) => {
      // Each is +OK; the reason of a refusal is not carried on (an AUTH's could name the user).
      if (buffer[start] === MINUS) throw new Error('refused');
    });
    setTimeoutMs(options.timeoutMs);
    return pipe;
  } catch {
    pipe.close();
    return undefined;
  }
}

/** How long opening a pipe (connection, AUTH, SELECT, SETNAME) may take. */
const OPEN_TIMEOUT_MS = 2000;

function rawPipeOn(
  socket: Socket,
  initialTimeoutMs: number,
): { pipe: RawPipe; setTimeoutMs: (ms: number) => void } {
  let timeoutMs = initialTimeoutMs;
  const queue: Request[] = [];
  let chunks: Buffer[] = [];
  let buffered = 0;
  /** Bytes the head of the buffer must reach before a reply there can be whole. */
  let needed = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const fail = (error: unknown) => {
    if (!closed) {
      closed = true;
      socket.destroy();
    }
    clearTimeout(timer);
    for (const request of queue.splice(0)) request.reject(error);
  };
  const arm = () => {
    clearTimeout(timer);
    timer =
      queue.length > 0
        ? setTimeout(() => fail(new Error('raw pipe: no reply in time')), timeoutMs)
        : undefined;
    timer?.unref();
  };

  socket.on('error', (error) => fail(error));
  socket.on('close', () => fail(new Error('raw pipe: connection closed')));
  socket.on('data', (chunk: Buffer) => {
    if (queue.length === 0) return fail(new Error('raw pipe: a reply nobody asked for'));
    chunks.push(chunk);
    buffered += chunk.length;
    if (buffered < needed) return;
    const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
    let pos = 0;
    needed = 0;
    while (queue.length > 0) {
      const end = replyEnd(buffer, pos, buffer.length);
      if (end < 0) {
        needed = -end - pos;
        break;
      }
      const request = queue[0]!;
      if (request.failure === undefined) {
        try {
          request.onReply(buffer, pos, end);
        } catch (error) {
          request.failure = error;
        }
      }
      pos = end;
      request.got++;
      if (request.got === request.replies) {
        queue.shift();
        if (request.failure === undefined) request.resolve();
        else request.reject(request.failure);
        arm();
      }
    }
    if (queue.length === 0 && pos < buffer.length)
      return fail(new Error('raw pipe: a reply nobody asked for'));
    chunks = pos < buffer.length ? [buffer.subarray(pos)] : [];
    buffered = buffer.length - pos;
  });

  const pipe: RawPipe = {
    send(request, replies, onReply) {
      if (closed) return Promise.reject(new Error('raw pipe: closed'));
      if (replies === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        queue.push({ replies, got: 0, onReply, failure: undefined, resolve, reject });
        if (queue.length === 1) arm();
        socket.write(request);
      });
    },
    get closed() {
      return closed;
    },
    close() {
      fail(new Error('raw pipe: closed'));
    },
  };
  return {
    pipe,
    setTimeoutMs: (ms) => {
      timeoutMs = ms;
    },
  };
}
