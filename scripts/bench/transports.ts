/**
 * What one upstream call costs in CPU through each HTTP client the service
 * could use, measured in this process against a small JSON server running in
 * a child process (so its CPU is not counted here): a bare keep-alive
 * `http.request`, `fetch` (ShipStation's client until it moved onto the service's
 * transport, `send` of lib/upstream/node-http.ts), the WooCommerce library through axios's own http
 * adapter and through the service's (lib/upstream/node-http.ts), and the
 * Stripe SDK through its fetch client, its Node client and the service's
 * (lib/card/stripe-http.ts). The figures behind the transport choices in
 * docs/benchmarks.md ("History": why the service has its own transports).
 *
 * Run: npm run bench -- --transports   (about a minute; writes nothing)
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import Stripe from 'stripe';
import { BoundedNodeHttpClient } from '@/lib/card/stripe-http';
import { nodeHttpAdapter, send } from '@/lib/upstream/node-http';

/** A WooCommerce order's size of JSON for every path; a Stripe payment intent for /v1/. */
const SERVER = `
const http = require('node:http');
const order = JSON.stringify({ id: 1, status: 'pending', currency: 'USD', total: '45.00', line_items: Array.from({ length: 5 }, (_, i) => ({ id: i, name: 'Item ' + i, quantity: 1, total: '9.00', meta_data: [] })), billing: { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com' }, shipping: {}, meta_data: Array.from({ length: 10 }, (_, i) => ({ id: i, key: '_k' + i, value: 'v'.repeat(30) })) });
const intent = JSON.stringify({ id: 'pi_1', object: 'payment_intent', amount: 4500, currency: 'usd', status: 'requires_payment_method', client_secret: 'pi_1_secret', metadata: { shop_order_id: '1' } });
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { const body = req.url.startsWith('/v1/') ? intent : order; res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); }); });
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const ROUNDS = 3;
const CALLS = 1500;
const WARMUP = 300;

export async function transportFigures(): Promise<{ name: string; msPerCall: number }[]> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = Number(await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve)));
    const base = `http://127.0.0.1:${port}`;
    // The library's CommonJS build, as the server loads it (serverExternalPackages).
    const WooCommerceRestApi = createRequire(import.meta.url)('@woocommerce/woocommerce-rest-api').default as new (options: object) => {
      get(endpoint: string): Promise<{ data: unknown }>;
    };
    const woo = (axiosConfig: object) =>
      new WooCommerceRestApi({ url: base, consumerKey: 'ck_bench', consumerSecret: 'cs_bench', version: 'wc/v3', timeout: 10_000, axiosConfig });
    const stripe = (httpClient: InstanceType<typeof Stripe.HttpClient>) =>
      new Stripe('sk_test_bench', { httpClient, protocol: 'http', host: '127.0.0.1', port, maxNetworkRetries: 0, telemetry: false });
    const agent = new Agent({ keepAlive: true });
    const bare = () =>
      new Promise<void>((resolve, reject) => {
        const outgoing = request(`${base}/wp-json/wc/v3/orders/1`, { agent }, (answer) => {
          answer.resume();
          answer.on('end', () => resolve());
        });
        outgoing.on('error', reject);
        outgoing.end();
      });
    const shipments = () => ({ url: new URL(`${base}/shipments`), method: 'GET', headers: {}, timeoutMs: 10_000 });
    const libraryAxios = woo({ maxRedirects: 0 });
    const libraryOurs = woo({ maxRedirects: 0, adapter: nodeHttpAdapter });
    const stripeFetch = stripe(Stripe.createFetchHttpClient());
    const stripeNode = stripe(Stripe.createNodeHttpClient());
    const stripeOurs = stripe(new BoundedNodeHttpClient());
    const create = (client: Stripe) => () =>
      client.paymentIntents.create({ amount: 4500, currency: 'usd', metadata: { shop_order_id: '1' } }, { idempotencyKey: `k-${Math.random()}` });
    const cases: [string, () => Promise<unknown>][] = [
      ['bare keep-alive http.request GET', bare],
      ['fetch GET', async () => (await fetch(`${base}/wp-json/wc/v3/orders/1`)).json()],
      // ShipStation's GET: fetch above until it moved onto the service transport.
      ['the service transport GET (send)', async () => JSON.parse((await send(shipments())).body.toString())],
      ['WooCommerce library GET, axios http adapter', () => libraryAxios.get('orders/1')],
      ['WooCommerce library GET, the service adapter', () => libraryOurs.get('orders/1')],
      ['Stripe retrieve, SDK fetch client', () => stripeFetch.paymentIntents.retrieve('pi_1')],
      ['Stripe retrieve, SDK Node client', () => stripeNode.paymentIntents.retrieve('pi_1')],
      ['Stripe retrieve, the service client', () => stripeOurs.paymentIntents.retrieve('pi_1')],
      ['Stripe create, SDK fetch client', create(stripeFetch)],
      ['Stripe create, the service client', create(stripeOurs)],
    ];
    for (const [, call] of cases) for (let i = 0; i < WARMUP; i += 1) await call();
    const best = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, call] of cases) {
        const before = process.cpuUsage();
        for (let i = 0; i < CALLS; i += 1) await call();
        const used = process.cpuUsage(before);
        const ms = (used.user + used.system) / 1000 / CALLS;
        best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, ms));
      }
    }
    agent.destroy();
    return cases.map(([name]) => ({ name, msPerCall: best.get(name) ?? Number.NaN }));
  } finally {
    child.kill();
  }
}
