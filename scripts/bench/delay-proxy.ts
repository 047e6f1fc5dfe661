/**
 * A TCP proxy that delays every chunk by a fixed time in each direction, so
 * that a redis-server on loopback answers as a managed Redis in the same
 * region does (Upstash, Redis Cloud: about 1 to 2 ms round trip from a
 * serverless function). Run in a process of its own, so the bench's own work
 * never holds a chunk back:
 *
 *   tsx scripts/bench/delay-proxy.ts <target port> <round trip ms> [<target port> <round trip ms> ...]
 *
 * prints one JSON line, the listening port of each pair in order.
 *
 * Node's timers cannot wait less than 1 ms, and a round trip of 1 ms is half a
 * millisecond each way: a chunk waits on a timer until its last millisecond,
 * then on setImmediate, so a delay is kept to a few tens of microseconds. The
 * bench measures the round trip through the proxy (PING) and reports that.
 */
import { createServer, connect, type Socket } from 'node:net';

const LOOPBACK = '127.0.0.1';

/** Writes each chunk to `to` `delayMs` after it arrived, in the order they arrived. */
function delayedPipe(from: Socket, to: Socket, delayMs: number): void {
  const queue: { due: number; chunk: Buffer }[] = [];
  let scheduled = false;
  const pump = () => {
    scheduled = false;
    const now = performance.now();
    while (queue.length > 0 && (queue[0] as { due: number }).due <= now) to.write((queue.shift() as { chunk: Buffer }).chunk);
    if (queue.length === 0) return;
    const wait = (queue[0] as { due: number }).due - now;
    scheduled = true;
    if (wait > 1.5) setTimeout(pump, Math.floor(wait - 1));
    else setImmediate(pump);
  };
  from.on('data', (chunk: Buffer) => {
    queue.push({ due: performance.now() + delayMs, chunk });
    if (!scheduled) pump();
  });
  from.on('end', () => {
    const finish = () => (queue.length === 0 ? to.end() : setTimeout(finish, delayMs + 1));
    finish();
  });
}

export interface DelayListener {
  port: number;
  close(): Promise<void>;
}

/** Listens on a free loopback port and forwards every connection to `targetPort`, half the round trip each way. */
export function delayListener(targetPort: number, roundTripMs: number): Promise<DelayListener> {
  const oneWay = roundTripMs / 2;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, LOOPBACK);
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
    delayedPipe(client, upstream, oneWay);
    delayedPipe(upstream, client, oneWay);
  });
  return new Promise((resolve) =>
    server.listen(0, LOOPBACK, () =>
      resolve({
        port: (server.address() as { port: number }).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const socket of sockets) socket.destroy();
          }),
      }),
    ),
  );
}

function main(): void {
  const args = process.argv.slice(2).map(Number);
  if (args.length === 0 || args.length % 2 !== 0 || args.some((n) => !Number.isFinite(n) || n < 0)) {
    console.error('usage: delay-proxy.ts <target port> <round trip ms> [...]');
    process.exit(2);
  }
  const pairs: [number, number][] = [];
  for (let i = 0; i < args.length; i += 2) pairs.push([args[i] as number, args[i + 1] as number]);
  void Promise.all(pairs.map(([port, rtt]) => delayListener(port, rtt))).then((listeners) => console.log(JSON.stringify(listeners.map((l) => l.port))));
}

// Run as a script by the bench (world.ts startDelayProxy); imported, by its test, it starts nothing.
if (/delay-proxy\.ts$/.test(process.argv[1] ?? '')) main();
