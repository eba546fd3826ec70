import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 that holds every chunk `delayMs` in each direction. */
export interface LatencyProxy {
  port: number;
  /**
   * Round trips so far, over all connections: a request burst from the client that follows an
   * answer (or starts the connection) counts one. A pipeline split into many TCP chunks is still
   * one; a command awaited after another's reply is one more.
   */
  roundTrips(): number;
  /** Cuts every connection open now, both ways (a flapping link); new ones are accepted as before. */
  dropAll(): number;
  close(): Promise<void>;
}

/**
 * Loopback hides the cost of round trips (tens of microseconds each); a Redis in another rack or
 * a managed Redis is 0.5–2 ms away. Delaying each chunk by the same amount keeps the order (Node
 * fires equal-duration timers first in, first out) and makes every round trip cost 2 × delayMs.
 */
export async function startLatencyProxy(
  target: { host: string; port: number },
  delayMs: number,
): Promise<LatencyProxy> {
  const sockets = new Set<Socket>();
  let trips = 0;
  const pipe = (from: Socket, to: Socket, onData: () => void) => {
    from.on('data', (chunk) => {
      onData();
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, delayMs);
    });
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
    from.on('error', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    // Nagle plus delayed ACKs would add their own ~40 ms stalls on top of the delay we model.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    // Between two answers, the client's chunks are one request burst.
    let answered = true;
    pipe(client, upstream, () => {
      if (answered) trips++;
      answered = false;
    });
    pipe(upstream, client, () => {
      answered = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    roundTrips: () => trips,
    dropAll() {
      const open = [...sockets];
      for (const socket of open) socket.destroy();
      return open.length / 2;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
