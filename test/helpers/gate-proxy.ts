import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real Redis whose client-to-server direction can be held:
 * while `hold()` is in force, what the client sends waits in the proxy (nothing is lost, the order
 * is kept) until `release()`. It stands for a process that stalls at the worst moment (a GC pause,
 * a lost lease, a slow network), with everything it sent landing afterwards.
 */
export interface GateProxy {
  port: number;
  url: string;
  hold(): void;
  release(): void;
  /** Resolves once a held chunk is waiting: the client has committed to its next command. */
  waiting(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateProxy(target: { host: string; port: number }): Promise<GateProxy> {
  const sockets = new Set<Socket>();
  const held: { to: Socket; chunk: Buffer }[] = [];
  let holding = false;
  let onHeld: (() => void) | undefined;
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => {
      if (!holding) return void upstream.write(chunk);
      held.push({ to: upstream, chunk });
      onHeld?.();
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    waiting() {
      if (held.length > 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        onHeld = () => {
          onHeld = undefined;
          resolve();
        };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
