/**
 * The bench's upstreams, in their own process so they never share the
 * server's CPU accounting: the WooCommerce and Stripe stand-ins with the demo
 * data, each behind a proxy of this file that
 *   - answers after a settable latency (0 ms or 40 ms), and
 *   - logs every upstream call (which upstream, method, path, start, end),
 * plus, when given a certificate, an https terminator in front of the
 * WooCommerce proxy (a production store is https), and a control API on
 * loopback for the bench: seed orders, set the latency, register or remove
 * an order status, read and clear the call log, and for the load mode put the
 * WooCommerce proxy behind a PHP host's worker pool and audit orders.
 *
 * Latency and logging wrap the stand-ins from outside (plain HTTP proxies)
 * rather than changing stand-ins/**.
 *
 * Run: tsx scripts/bench/stand-ins.ts [--tls-cert file --tls-key file]
 * Prints one JSON line with the URLs, then serves until stdin closes or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { DEMO_CUSTOMER_ID, startDemoStandIns } from '@/stand-ins/demo/world';
import { listen, LOOPBACK, sendJson, type RunningServer } from '@/stand-ins/loopback-http';
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
 * The store as a PHP host runs it (`npm run bench -- --load`): `workers`
 * requests in service at once, the rest waiting in arrival order, each taking
 * its service time (a read or a write) once a worker has it. A request whose
 * client gave up is still served when its turn comes, as PHP goes on after the
 * client left: that is how an overloaded store falls behind. Off (0 workers)
 * outside the load mode.
 */
class WorkerPool {
  workers = 0;
  readMs = 0;
  writeMs = 0;
  private busy = 0;
  private readonly waiting: (() => void)[] = [];
  stats = WorkerPool.emptyStats();

  static emptyStats() {
    return { served: 0, abandoned: 0, maxQueue: 0, maxBusy: 0, busyMs: 0, waits: [] as number[] };
  }

  get active(): boolean {
    return this.workers > 0;
  }

  async serve<T>(method: string, work: () => Promise<T>): Promise<T> {
    const arrived = now();
    if (this.busy >= this.workers) {
      // Handed a worker directly by the one that finishes (see below), so `busy` already counts it.
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        this.stats.maxQueue = Math.max(this.stats.maxQueue, this.waiting.length);
      });
    } else {
      this.busy += 1;
    }
    this.stats.maxBusy = Math.max(this.stats.maxBusy, this.busy);
    this.stats.waits.push(now() - arrived);
    const began = now();
    try {
      const result = await work();
      await untilElapsed(began, method === 'GET' ? this.readMs : this.writeMs);
      return result;
    } finally {
      this.stats.served += 1;
      this.stats.busyMs += now() - began;
      const next = this.waiting.shift();
      if (next) next();
      else this.busy -= 1;
    }
  }

  takeStats() {
    const taken = { ...this.stats, queued: this.waiting.length, busy: this.busy };
    this.stats = WorkerPool.emptyStats();
    return taken;
  }
}

const storeHost = new WorkerPool();

interface Forwarded {
  status: number;
  headers: IncomingHttpHeaders;
  payload: Buffer;
}

function forward(agent: Agent, to: URL, request: IncomingMessage, path: string, body: string): Promise<Forwarded | undefined> {
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      // Host is kept: the WooCommerce stand-in checks OAuth signatures made for the URL the client called.
      { host: to.hostname, port: to.port, method: request.method, path, headers: request.headers, agent },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, payload: Buffer.concat(chunks) }));
      },
    );
    outgoing.on('error', () => resolve(undefined));
    outgoing.end(body);
  });
}

/**
 * A proxy in front of `target` that answers `latencyMs` after the request
 * arrived, and logs the call. The stand-in's own work (its model, its OAuth
 * check) happens inside that time, as a real upstream's would: the service is
 * measured against an upstream that takes exactly `latencyMs`, not
 * `latencyMs` plus the stand-in's CPU time on the bench's shared cores.
 * With a worker pool switched on, the pool's service times replace `latencyMs`.
 */
function delayingProxy(upstream: string, target: string, pool?: WorkerPool): Promise<RunningServer> {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  return listen(async (request, response, url, body) => {
    const start = now();
    const path = `${url.pathname}${url.search}`;
    let answer: Forwarded | undefined;
    if (pool?.active) {
      answer = await pool.serve(request.method ?? 'GET', () => forward(agent, to, request, path, body));
      if (response.destroyed) pool.stats.abandoned += 1;
    } else {
      answer = await forward(agent, to, request, path, body);
      await untilElapsed(start, latencyMs);
    }
    if (!answer) {
      if (!response.headersSent) response.writeHead(502);
      response.end();
      return;
    }
    response.writeHead(answer.status, endToEndHeaders(answer.headers));
    response.end(answer.payload);
    calls.push({ upstream, method: request.method ?? 'GET', path: url.pathname, status: answer.status, start, end: now() });
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
  const wooProxy = await delayingProxy('woocommerce', standIns.woocommerce.url, storeHost);
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
      case 'POST /workers':
        // The PHP host of the load mode; 0 workers switches it off.
        storeHost.workers = Number(input.workers ?? 0);
        storeHost.readMs = Number(input.readMs ?? 0);
        storeHost.writeMs = Number(input.writeMs ?? 0);
        return sendJson(response, 200, { workers: storeHost.workers });
      case 'GET /store-stats':
        // Read and clear, like the call log.
        return sendJson(response, 200, storeHost.takeStats());
      case 'POST /audit': {
        // Each order's status and how many entries each named meta key has: a fact applied twice shows as 2.
        const keys = Array.isArray(input.keys) ? input.keys.map(String) : [];
        const orders = (Array.isArray(input.ids) ? input.ids : []).map((id) => {
          const order = woo.get(Number(id));
          const counts = Object.fromEntries(keys.map((key) => [key, order.meta_data.filter((entry) => entry.key === key).length]));
          return { id: order.id, status: order.status, counts };
        });
        return sendJson(response, 200, { orders });
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
