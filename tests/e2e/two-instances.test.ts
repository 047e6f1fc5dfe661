/**
 * Two instances of the service (two `next start` on their own ports) sharing
 * one Redis and one WooCommerce/Stripe stand-in, as a serverless deployment
 * runs: the rate limit, the per-order locks and the processed events hold
 * across both. Skipped, with the reason, when REDIS_URL is unset.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SECRETS, demoServiceEnv, startDemoStandIns, type DemoStandIns } from '@/stand-ins/demo/world';
import { cardEvent, signCardEvent } from '@/stand-ins/webhook-deliveries';
import { demoToken, e2eIp, startService, type ServiceServer } from '../support/e2e';
import { awayFromWindowEdge } from '../support/redis';
import { REDIS_SKIP_REASON } from '../support/redis-global-setup';

const REDIS_URL = process.env.REDIS_URL;
const STOREFRONT = 'https://storefront.e2e.test';

/** Every store answer takes this long, so requests on the two instances overlap as they would in production. */
const STORE_LATENCY_MS = 150;

let standIns: DemoStandIns;
let slowStore: Server | undefined;
let instances: ServiceServer[] = [];
/** A loopback proxy in front of the store stand-in that holds each request a while (the Host header is kept: it is signed). */
async function startSlowProxy(target: string): Promise<{ server: Server; url: string }> {
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    setTimeout(() => {
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forward.on('error', () => outgoing.writeHead(502).end());
      incoming.pipe(forward);
    }, STORE_LATENCY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Every order update that reached the store stand-in, in order. */
const storeWrites: { orderId: number; body: Record<string, unknown> }[] = [];

describe.skipIf(!REDIS_URL)(`two instances sharing one Redis${REDIS_URL ? '' : ` (skipped: ${REDIS_SKIP_REASON})`}`, () => {
  beforeAll(async () => {
    standIns = await startDemoStandIns();
    const model = standIns.woocommerce.model;
    const update = model.update.bind(model);
    model.update = (id: number, body: Record<string, unknown>) => {
      storeWrites.push({ orderId: id, body });
      return update(id, body);
    };
    const proxy = await startSlowProxy(standIns.woocommerce.url);
    slowStore = proxy.server;
    const env = {
      ...demoServiceEnv({ woocommerce: proxy.url, stripe: standIns.stripe.url, storefrontOrigins: [STOREFRONT] }),
      TRUST_PROXY_HOPS: '1',
      UPSTREAM_TIMEOUT_MS: '5000',
      REDIS_URL: REDIS_URL as string,
      REDIS_TIMEOUT_MS: '1000',
      // This run's keys only: earlier runs' counters and event ids stay out of the way.
      REDIS_KEY_PREFIX: `e2e:${randomBytes(4).toString('hex')}:`,
    };
    instances = await Promise.all([startService('redis-instance-a', env), startService('redis-instance-b', env)]);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    slowStore?.closeAllConnections();
    await new Promise((resolve) => (slowStore ? slowStore.close(resolve) : resolve(undefined)));
    await standIns?.close();
  });

  const post = (instance: number, path: string, body: string, headers: Record<string, string>) =>
    fetch(`${instances[instance]!.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  it('the 11th checkout request from one client, spread over both instances, gets 429', async () => {
    // Both instances warmed up first (a cold route is slow), then one window from start to end.
    await Promise.all([0, 1].map((i) => post(i, '/api/submit-order', '{}', { Origin: STOREFRONT, 'X-Forwarded-For': e2eIp() })));
    await awayFromWindowEdge(60_000, 20_000);
    const ip = e2eIp();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) {
      const response = await post(i % 2, '/api/submit-order', '{}', { Origin: STOREFRONT, 'X-Forwarded-For': ip });
      statuses.push(response.status);
      if (i === 10) expect(response.headers.get('x-ratelimit-limit')).toBe('10');
    }
    expect(statuses.slice(0, 10).every((status) => status === 400)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Another client is not affected.
    expect((await post(0, '/api/submit-order', '{}', { Origin: STOREFRONT, 'X-Forwarded-For': e2eIp() })).status).toBe(400);
  });

  it('six concurrent payment-intent calls for one order, split over both, create one intent and store one id', async () => {
    standIns.woocommerce.model.seed({ id: 4101, lines: [{ total: '30.00' }], shipping_total: '5.00' });
    const body = JSON.stringify({
      token: await demoToken(4101),
      billing_address: { first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Row', city: 'London', postcode: 'N1 7AA', country: 'GB' },
      shipping_address: null,
      contact_info: { email: 'ada@example.com', phone: '+44 20 7946 0000' },
    });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(i % 2, '/api/payment-intent', body, { Origin: STOREFRONT, 'X-Forwarded-For': e2eIp() }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { payment_intent_id?: string },
        })),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const ids = new Set(answers.map((a) => a.body.payment_intent_id));
    expect(ids.size).toBe(1);
    const intents = [...standIns.stripe.model.intents.values()].filter((intent) => intent.metadata.shop_order_id === '4101');
    expect(intents).toHaveLength(1);
    // Every call wrote the addresses, one after another. A write built from an order read before the
    // id was stored carries the id as a new meta entry (no meta id): only the first may.
    const orderWrites = storeWrites.filter((write) => write.orderId === 4101);
    expect(orderWrites).toHaveLength(6);
    const idWrites = orderWrites.filter((write) =>
      (write.body.meta_data as { id?: number; key: string }[]).some((m) => m.key === '_payment_intent_id' && m.id === undefined),
    );
    expect(idWrites).toHaveLength(1);
    expect(standIns.woocommerce.model.get(4101).meta_data.filter((m) => m.key === '_payment_intent_id')).toEqual([
      expect.objectContaining({ value: [...ids][0] }),
    ]);
  });

  it('one signed card event posted to both at the same moment writes the order once', async () => {
    standIns.woocommerce.model.seed({ id: 4102, lines: [{ total: '20.00' }] });
    const created = await post(0, '/api/payment-intent', JSON.stringify({ token: await demoToken(4102) }), {
      Origin: STOREFRONT,
      'X-Forwarded-For': e2eIp(),
    });
    const { payment_intent_id: intentId } = (await created.json()) as { payment_intent_id: string };
    const paid = standIns.stripe.model.succeed(intentId);
    const { payload, signature } = signCardEvent(cardEvent('payment_intent.succeeded', paid), DEMO_SECRETS.stripeWebhookSecret);
    const before = storeWrites.filter((write) => write.orderId === 4102).length;

    const deliveries = await Promise.all(
      [0, 1].map((instance) =>
        post(instance, '/api/stripe/webhook', payload, { 'Stripe-Signature': signature, 'X-Forwarded-For': e2eIp() }).then(async (r) => ({
          status: r.status,
          body: await r.json(),
        })),
      ),
    );
    expect(deliveries).toEqual([
      { status: 200, body: { received: true } },
      { status: 200, body: { received: true } },
    ]);
    const writes = storeWrites.filter((write) => write.orderId === 4102).slice(before);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.body.status).toBe('processing');
    expect(standIns.woocommerce.model.get(4102).status).toBe('processing');
  });
});
