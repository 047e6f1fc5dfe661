/**
 * The store client's transport (lib/upstream/node-http.ts), against a real
 * loopback server: what it sends, that it keeps one connection alive across
 * calls, that its timeout ends the whole attempt and frees the socket, that
 * it follows no redirect and reads no unbounded answer, and that a failure
 * carries a code and the store's status and body but never the URL.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreError, UpstreamHttpError } from '@/lib/errors';
import { WooCommerceStore } from '@/lib/store/woocommerce';
import { MAX_ANSWER_BYTES, nodeHttpAdapter, type AdapterRequest } from '@/lib/upstream/node-http';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[];
const sockets = new Set<Socket>();
let connections = 0;
let handler: (request: IncomingMessage, response: ServerResponse) => void;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(request, response);
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  handler = (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 7, status: 'pending' }));
  };
});

/** An answer 1 MiB over MAX_ANSWER_BYTES, written as fast as the client reads it. */
function tooLarge(_request: IncomingMessage, response: ServerResponse): void {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  response.writeHead(200, { 'content-type': 'application/json' });
  let sent = 0;
  const more = () => {
    while (sent <= MAX_ANSWER_BYTES + chunk.length) {
      sent += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', more);
    }
    response.end();
  };
  response.on('error', () => undefined);
  more();
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as UpstreamHttpError);

describe('what the adapter sends', () => {
  it('sends the method, the headers, the body and the params as axios would', async () => {
    const answer = await nodeHttpAdapter({
      url: `${base}/wp-json/wc/v3/orders/7?a=1`,
      method: 'put',
      params: { oauth_nonce: 'n o', skipped: undefined },
      headers: { toJSON: () => ({ Accept: 'application/json', 'Content-Type': 'application/json;charset=utf-8', Dropped: null }) },
      data: JSON.stringify({ status: 'processing' }),
      timeout: 2000,
    });
    expect(answer).toMatchObject({ status: 200, data: { id: 7, status: 'pending' } });
    const [request] = seen;
    expect(request?.method).toBe('PUT');
    const url = new URL(request?.url ?? '', base);
    expect(url.pathname).toBe('/wp-json/wc/v3/orders/7');
    expect([...url.searchParams]).toEqual([['a', '1'], ['oauth_nonce', 'n o']]);
    expect(request?.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/json;charset=utf-8', 'content-length': '23' });
    expect(request?.headers).not.toHaveProperty('dropped');
    expect(request?.body).toBe('{"status":"processing"}');
  });

  it('sends Basic credentials when given auth (the library does so over https)', async () => {
    await nodeHttpAdapter({ url: `${base}/x`, method: 'get', auth: { username: 'ck_é', password: 'cs:secret' }, timeout: 2000 });
    expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from('ck_é:cs:secret', 'utf8').toString('base64')}`);
  });

  it('keeps one connection for calls made one after another', async () => {
    const before = connections;
    for (let i = 0; i < 5; i += 1) await nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 2000 });
    expect(connections - before).toBeLessThanOrEqual(1);
    expect(seen).toHaveLength(5);
  });

  it('reads JSON behind a byte-order mark, as axios did (a plugin file saved with one prints it first)', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      response.end(`\uFEFF${JSON.stringify({ id: 7 })}`);
    };
    expect((await nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 2000 })).data).toEqual({ id: 7 });
  });

  it('refuses a body or a parameter it would have to guess how to send, and sends nothing', async () => {
    for (const request of [
      { data: Buffer.from('{}') },
      { data: { status: 'processing' } },
      { params: { include: [1, 2] } },
      { params: { after: new Date() } },
    ] as AdapterRequest[]) {
      expect(await failureOf(nodeHttpAdapter({ url: `${base}/x`, method: 'post', timeout: 2000, ...request }))).toMatchObject({
        code: 'ERR_BAD_OPTION_VALUE',
      });
    }
    expect(seen).toEqual([]);
  });

  it('hands back a body that is not JSON as text, for the client to refuse', async () => {
    handler = (_request, response) => response.end('<html>maintenance</html>');
    expect((await nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 2000 })).data).toBe('<html>maintenance</html>');
  });
});

describe('how an attempt fails', () => {
  it('an answer outside 2xx fails with its status and parsed body, and no URL in the error', async () => {
    handler = (_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 'woocommerce_rest_cannot_view' }));
    };
    const error = await failureOf(
      nodeHttpAdapter({ url: `${base}/x?consumer_key=ck_live_secret`, method: 'get', params: { oauth_signature: 'sig' }, timeout: 2000 }),
    );
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ code: 'ERR_BAD_REQUEST', response: { status: 401, data: { code: 'woocommerce_rest_cannot_view' } } });
    // The whole error, every property: axios's own errors carried the request configuration (URL, credentials).
    expect(inspect(error, { depth: 10, showHidden: true })).not.toMatch(/ck_live_secret|oauth_signature|127\.0\.0\.1/);
  });

  it('a 5xx is ERR_BAD_RESPONSE', async () => {
    handler = (_request, response) => {
      response.writeHead(503);
      response.end();
    };
    expect(await failureOf(nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 2000 }))).toMatchObject({
      code: 'ERR_BAD_RESPONSE',
      response: { status: 503 },
    });
  });

  it('follows no redirect: the keys never reach the other host', async () => {
    const elsewhere: string[] = [];
    const other = createServer((request, response) => {
      elsewhere.push(request.url ?? '');
      response.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      handler = (_request, response) => {
        response.writeHead(302, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/steal` });
        response.end();
      };
      const error = await failureOf(nodeHttpAdapter({ url: `${base}/x`, method: 'get', auth: { username: 'ck', password: 'cs' }, timeout: 2000 }));
      expect(error).toMatchObject({ response: { status: 302 } });
      expect(elsewhere).toEqual([]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('the timeout ends the whole attempt, even while the answer drips, and closes the socket', async () => {
    let dripSocket: Socket | undefined;
    let dripped!: () => void;
    const dripping = new Promise<void>((resolve) => (dripped = resolve));
    handler = (request, response) => {
      dripSocket = request.socket;
      response.writeHead(200, { 'content-type': 'application/json' });
      let drops = 0;
      // The drip runs on a real interval; only the adapter's timer below is in the test's hands.
      const drip = setInterval(() => {
        response.write(' ');
        if ((drops += 1) === 3) dripped();
      }, 20);
      response.on('close', () => clearInterval(drip));
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let settled = false;
      const attempt = failureOf(nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 300 })).finally(() => (settled = true));
      // The answer has started and keeps arriving: socket idleness alone would never end this call.
      await dripping;
      await vi.advanceTimersByTimeAsync(299);
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await attempt).toMatchObject({ code: 'ECONNABORTED' });
    } finally {
      vi.useRealTimers();
    }
    await expect.poll(() => dripSocket?.destroyed, { timeout: 10_000 }).toBe(true);
  });

  it('an abort signal ends the attempt', async () => {
    const controller = new AbortController();
    // Aborted once the request is on the server, which never answers it.
    handler = () => controller.abort();
    const attempt = failureOf(nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 5000, signal: controller.signal }));
    expect(await attempt).toMatchObject({ code: 'ERR_CANCELED' });
  });

  it('reads no answer larger than MAX_ANSWER_BYTES', async () => {
    handler = tooLarge;
    expect(await failureOf(nodeHttpAdapter({ url: `${base}/x`, method: 'get', timeout: 5000 }))).toMatchObject({ code: 'ERR_ANSWER_TOO_LARGE' });
  });

  it('a refused connection fails with the socket error code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const request: AdapterRequest = { url: `http://127.0.0.1:${port}/x`, method: 'get', timeout: 2000 };
    expect(await failureOf(nodeHttpAdapter(request))).toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('the store client goes through it', () => {
  it('refuses an answer larger than MAX_ANSWER_BYTES, which axios would have read whole', async () => {
    handler = tooLarge;
    const store = new WooCommerceStore({ url: base, consumerKey: 'ck_test', consumerSecret: 'cs_test' }, 5000);
    const error = await store.getOrder(7).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ failure: 'unavailable' });
    // Signed with OAuth 1.0a over http, as the library does, through the adapter.
    expect(new URL(seen[0]?.url ?? '', base).searchParams.get('oauth_consumer_key')).toBe('ck_test');
  });
});

describe('idle connections', () => {
  it(
    "drops an idle socket a second before the server's Keep-Alive hint runs out, so a write never goes out on a closed one",
    async () => {
      // The server hints `Keep-Alive: timeout=2` but itself keeps an idle socket for a minute, so the only
      // thing that can end the connection within this test is the client acting on the hint (the agent's
      // own 5 s idle limit lies beyond the test's time limit).
      const short = createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          response.setHeader('Keep-Alive', 'timeout=2');
          response.end('{}');
        });
      });
      short.keepAliveTimeout = 60_000;
      let closedFirstByClient = false;
      const closed = new Promise<void>((resolve) => {
        short.on('connection', (accepted: Socket) => {
          // 'end' is the peer's FIN; the server's side still open then means the client closed first (ahead
          // of the server's own listener, which answers a FIN by ending its side).
          accepted.prependListener('end', () => (closedFirstByClient = !accepted.writableEnded));
          accepted.on('close', () => resolve());
        });
      });
      await new Promise<void>((resolve) => short.listen(0, '127.0.0.1', resolve));
      try {
        const answer = await nodeHttpAdapter({ url: `http://127.0.0.1:${(short.address() as AddressInfo).port}/x`, method: 'get', timeout: 2000 });
        expect(answer.headers['keep-alive']).toBe('timeout=2');
        await closed;
        expect(closedFirstByClient).toBe(true);
      } finally {
        short.closeAllConnections();
        await new Promise((resolve) => short.close(resolve));
      }
    },
    4_000,
  );
});
