/**
 * The bench's upstreams, in their own process so they never share the
 * server's CPU accounting: the WooCommerce and Stripe stand-ins with the demo
 * data, each behind a proxy of this file that
 *   - answers after a settable latency (0 ms or 40 ms), and
 *   - logs every upstream call (which upstream, method, path, start, end),
 * plus, when given a certificate, an https terminator in front of the
 * WooCommerce proxy (a production store is https), and a control API on
 * loopback for the bench: seed orders, set the latency, register or remove
 * an order status, read and clear the call log.
 *
 * Latency and logging wrap the stand-ins from outside (plain HTTP proxies)
 * rather than changing scripts/stand-ins/**.
 *
 * Run: tsx scripts/bench/stand-ins.ts [--tls-cert file --tls-key file]
 * Prints one JSON line with the URLs, then serves until stdin closes or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { DEMO_CUSTOMER_ID, startDemoStandIns } from '@/scripts/stand-ins/demo';
import { listen, LOOPBACK, sendJson, type RunningServer } from '@/scripts/stand-ins/http';
import type { BenchStandInUrls, UpstreamCall } from './contract';

const calls: UpstreamCall[] = [];

/**
 * How long the proxies keep an idle connection: Apache's default
 * KeepAliveTimeout. The stand-ins close idle sockets after 1 s and say so
 * (`Keep-Alive: timeout=1`); Node's client keeps a socket only while the
 * server's hint minus 1 s is left, so it opened a new connection for every
 * upstream call, which a production store (Apache 5 s, nginx 75 s) does not
 * make it do. The server's profile showed connect() at about 4 % of its CPU.
 */
const STORE_KEEP_ALIVE_MS = 5000;

/** The answer's headers less the hop-by-hop ones, which describe the stand-in's connection to the proxy, not the client's. */
function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers;
  return rest;
}

let latencyMs = 0;
const now = () => performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once `ms` have passed since `start` on this clock, as close after it as the event loop allows: a
 * timer alone may fire a fraction of a millisecond early, or a millisecond late (its granularity), so it
 * sleeps to a millisecond before and yields the loop for the rest.
 */
async function untilElapsed(start: number, ms: number): Promise<void> {
  const left = start + ms - now();
  if (left > 1) await sleep(left - 1);
  while (start + ms - now() > 0) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A proxy in front of `target` that answers `latencyMs` after the request
 * arrived, and logs the call. The stand-in's own work (its model, its OAuth
 * check) happens inside that time, as a real upstream's would: the service is
 * measured against an upstream that takes exactly `latencyMs`, not
 * `latencyMs` plus the stand-in's CPU time on the bench's shared cores.
 */
function delayingProxy(upstream: string, target: string): Promise<RunningServer> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  return listen(async (request, response, url, body) => {
    const start = now();
    await new Promise<void>((resolve) => {
      const forward = httpRequest(
        {
          host: to.hostname,
          port: to.port,
          method: request.method,
          path: `${url.pathname}${url.search}`,
          // Host is kept: the WooCommerce stand-in checks OAuth signatures made for the URL the client called.
          headers: request.headers,
          agent,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            void untilElapsed(start, latencyMs).then(() => {
              response.writeHead(answer.statusCode ?? 502, endToEndHeaders(answer.headers));
              response.end(Buffer.concat(chunks));
              calls.push({ upstream, method: request.method ?? 'GET', path: url.pathname, status: answer.statusCode ?? 0, start, end: now() });
              resolve();
            });
          });
        },
      );
      forward.on('error', () => {
        if (!response.headersSent) response.writeHead(502);
        response.end();
        resolve();
      });
      forward.end(body);
    });
  }, 0, `${upstream} proxy`, { keepAliveMs: STORE_KEEP_ALIVE_MS });
}

/** TLS in front of an http target, as a production store's web server would be. */
function tlsTerminator(target: string, cert: string, key: string): Promise<RunningServer> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const server = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, (request, response) => {
    const forward = httpRequest(
      { host: to.hostname, port: to.port, method: request.method, path: request.url, headers: request.headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, endToEndHeaders(answer.headers));
        answer.pipe(response);
      },
    );
    forward.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(forward);
  });
  server.keepAliveTimeout = STORE_KEEP_ALIVE_MS;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `https://${LOOPBACK}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'tls-cert': { type: 'string' }, 'tls-key': { type: 'string' } } });
  const standIns = await startDemoStandIns();
  const woo = standIns.woocommerce.model;
  const wooProxy = await delayingProxy('woocommerce', standIns.woocommerce.url);
  const stripeProxy = await delayingProxy('stripe', standIns.stripe.url);
  const https =
    values['tls-cert'] && values['tls-key'] ? await tlsTerminator(wooProxy.url, values['tls-cert'], values['tls-key']) : undefined;
  let nextOrderId = 100_000;

  const control = await listen((request: IncomingMessage, response: ServerResponse, url: URL, body: string) => {
    const input = (body ? JSON.parse(body) : {}) as Record<string, unknown>;
    const route = `${request.method} ${url.pathname}`;
    switch (route) {
      case 'POST /seed': {
        // Fresh orders: `count` of them, pending unless told, guest unless `registered`.
        const count = Number(input.count ?? 1);
        const registered = input.registered === true;
        const ids: number[] = [];
        for (let i = 0; i < count; i += 1) {
          const id = nextOrderId++;
          woo.seed({
            id,
            status: typeof input.status === 'string' ? input.status : 'pending',
            ...(registered ? { customer_id: DEMO_CUSTOMER_ID } : {}),
            billing: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', country: 'US' },
            lines: [{ name: 'Organic cotton T-shirt', quantity: 2, total: '40.00' }],
            shipping_total: '5.00',
          });
          ids.push(id);
        }
        if (registered) woo.carts.set(DEMO_CUSTOMER_ID, [{ product_id: 500, quantity: 1 }]);
        return sendJson(response, 200, { ids });
      }
      case 'POST /latency':
        latencyMs = Number(input.ms ?? 0);
        return sendJson(response, 200, { latencyMs });
      case 'POST /status': {
        const status = String(input.status);
        if (input.registered === false) woo.removeStatus(status);
        else woo.addStatus(status);
        return sendJson(response, 200, { status, registered: input.registered !== false });
      }
      case 'GET /order': {
        const order = woo.get(Number(url.searchParams.get('id')));
        return sendJson(response, 200, { id: order.id, status: order.status });
      }
      case 'GET /calls':
        // Read and clear: each measurement takes the calls made since the last one.
        return sendJson(response, 200, { now: now(), calls: calls.splice(0, calls.length) });
      case 'GET /now':
        return sendJson(response, 200, { now: now() });
      default:
        return sendJson(response, 404, { error: `no ${route}` });
    }
  }, 0, 'bench control');

  const urls: BenchStandInUrls = {
    woocommerce: wooProxy.url,
    ...(https ? { woocommerceHttps: https.url } : {}),
    stripe: stripeProxy.url,
    control: control.url,
  };
  process.stdout.write(`${JSON.stringify(urls)}\n`);

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await Promise.all([wooProxy.close(), stripeProxy.close(), control.close(), https?.close(), standIns.close()]);
    process.exit(0);
  };
  process.on('SIGTERM', () => void close());
  process.on('SIGINT', () => void close());
  // The bench holds our stdin: when it goes away (even killed), so do we.
  process.stdin.on('end', () => void close());
  process.stdin.resume();
}

void main();
