/**
 * A loopback TCP proxy that cuts its connections when a test says so, as an idle limit does to a
 * frozen instance's connection: `cut` closes them (the client reads the close before its next call);
 * `forget` answers each one's next byte with a reset (a NAT that dropped it: the call is written
 * into a dead connection). No timers: every cut happens on the test's word.
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

interface Link {
  client: Socket;
  upstream: Socket;
  forgotten: boolean;
}

export async function cuttingProxy(targetPort: number) {
  const links = new Set<Link>();
  let accepted = 0;
  let newcomers: 'welcome' | 'refuse' | 'hold' = 'welcome';
  const held = new Set<Socket>();
  const server = createServer((client) => {
    accepted += 1;
    if (newcomers === 'refuse') client.destroy();
    if (newcomers === 'hold') held.add(client);
    if (newcomers !== 'welcome') return;
    const upstream = connect(targetPort, '127.0.0.1');
    const link: Link = { client, upstream, forgotten: false };
    links.add(link);
    const close = () => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (!link.forgotten) {
        upstream.write(chunk);
        return;
      }
      links.delete(link);
      upstream.destroy();
      client.resetAndDestroy();
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const socket of [client, upstream]) {
      socket.on('error', close);
      socket.on('close', close);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** Connections the proxy has accepted so far: each reconnection adds one. */
    accepted: () => accepted,
    cut: () => {
      for (const link of [...links]) {
        links.delete(link);
        link.upstream.destroy();
        link.client.end();
      }
    },
    forget: () => {
      for (const link of links) link.forgotten = true;
    },
    /** New connections: closed at once (`refuse`), or accepted and never answered (`hold`). */
    greet: (how: 'refuse' | 'hold') => {
      newcomers = how;
    },
    close: () => {
      for (const link of links) link.client.destroy();
      for (const socket of held) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
