/**
 * Plumbing shared by the local stand-in servers: loopback listening, body
 * reading and JSON answers. Not part of the production bundle.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const LOOPBACK = '127.0.0.1';
const MAX_BODY_BYTES = 1024 * 1024;

export type Handler = (request: IncomingMessage, response: ServerResponse, url: URL, body: string) => Promise<void> | void;

/** A stand-in written once as `(Request) => Promise<Response>`, mountable by msw and by a node server alike. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** Connection-level headers that belong to the socket, not to the request a handler reads. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'expect']);

/** Mounts a fetch-style handler on a node http server: the request becomes a `Request`, the `Response` is written back. */
export function serveFetch(handler: FetchHandler): Handler {
  return async (request, response, url, body) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const method = request.method ?? 'GET';
    const answer = await handler(
      new Request(url, { method, headers, ...(method === 'GET' || method === 'HEAD' || body === '' ? {} : { body }) }),
    );
    const payload = Buffer.from(await answer.arrayBuffer());
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      out[name] = value;
    });
    response.writeHead(answer.status, { ...out, 'Content-Length': String(payload.length) });
    response.end(payload);
  };
}

export interface RunningServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=UTF-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/** Starts an HTTP server on loopback only; port 0 picks a free port. */
export function listen(
  handler: Handler,
  port = 0,
  label = 'stand-in',
  options: { keepAliveMs?: number } = {},
): Promise<RunningServer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${request.headers.host ?? LOOPBACK}`);
    readBody(request)
      .then((body) => handler(request, response, url, body))
      .catch((error: unknown) => {
        console.error(`[${label}] ${request.method} ${url.pathname} failed:`, error);
        if (!response.headersSent) sendJson(response, 500, { error: 'stand-in failure' });
        else response.end();
      });
  });
  // Loopback stand-ins must not keep a test run or the launcher alive on idle sockets; the bench
  // asks for a production store's keep-alive instead.
  server.keepAliveTimeout = options.keepAliveMs ?? 1000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => {
      server.off('error', reject);
      const actual = (server.address() as AddressInfo).port;
      resolve({
        url: `http://${LOOPBACK}:${actual}`,
        port: actual,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** Listens on the preferred port when it is free, otherwise on any free port. */
export async function listenPreferring(handler: Handler, preferred: number, label: string): Promise<RunningServer> {
  try {
    return await listen(handler, preferred, label);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return listen(handler, 0, label);
  }
}

/** A free TCP port on loopback (for child processes that must be told their port). */
export async function freePort(): Promise<number> {
  const probe = await listen(() => undefined);
  await probe.close();
  return probe.port;
}
