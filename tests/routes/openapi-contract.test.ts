/**
 * The OpenAPI document against the code: it is a valid OpenAPI 3.1 document,
 * docs/openapi.json is up to date, GET /api/openapi.json serves it, and every
 * response it documents is produced by the real route handlers (with msw as
 * the store and the card provider) and matches its schema — and nothing the
 * handlers answer here is undocumented.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Stripe from 'stripe';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { POST as cardPOST } from '@/app/api/cardprovider/webhook/route';
import { GET as openApiGET } from '@/app/api/openapi.json/route';
import { OPTIONS as paymentIntentOPTIONS, POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { OPTIONS as shippingRateOPTIONS, POST as shippingRatePOST } from '@/app/api/express-checkout/shipping-rate/route';
import { OPTIONS as shippingRatesOPTIONS, POST as shippingRatesPOST } from '@/app/api/express-checkout/shipping-rates/route';
import { POST as shippingPOST } from '@/app/api/shipping/webhook/route';
import { POST as shipStationPOST } from '@/app/api/shipstation/webhook/route';
import { POST as stripePOST } from '@/app/api/stripe/webhook/route';
import { OPTIONS as submitOrderOPTIONS, POST as submitOrderPOST } from '@/app/api/submit-order/route';
import { OPENAPI_FILE, serializedOpenApiDocument } from '@/scripts/openapi-document/file';
import { getServices } from '@/lib/services';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';
import { TEST_STOREFRONT_ORIGIN, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { checkedResponses, documentedResponses, expectDocumentedResponse, openApiDocument } from '../support/openapi';
import { paidOrder } from '../support/card-events';
import { useProviders } from '../support/providers';
import { configureShipping } from '@/stand-ins/woocommerce/shipping-zones';
import { STORE_ROUTES, storeRequest, TEST_STORE_CALLBACK_SECRET, type StoreRoute } from '../support/store-callbacks';
import { awayFromWindowEdge, freshIp, postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const billing = { first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Analytical Row', city: 'London', postcode: 'N1 7AA', country: 'GB' };
const contact = { email: 'ada@example.com', phone: '+44 20 7946 0000' };
const TOO_LARGE_CHECKOUT = JSON.stringify({ token: 'x', padding: 'x'.repeat(33 * 1024) });
const TOO_LARGE_WEBHOOK = JSON.stringify({ resource_type: 'SHIP_NOTIFY', padding: 'x'.repeat(513 * 1024) });

describe('the document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(openApiDocument);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(openApiDocument.openapi).toMatch(/^3\.1\./);
  });

  it('has components that compile as strict JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false });
    // The components keep their document paths, so their `#/components/schemas/…` references resolve as in the document.
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'https://contract.test/openapi.json', components: openApiDocument.components });
    for (const name of Object.keys(openApiDocument.components.schemas)) {
      expect(() => ajv.compile({ $ref: `https://contract.test/openapi.json#/components/schemas/${name}` }), name).not.toThrow();
    }
  });

  it('docs/openapi.json is up to date (run `npm run openapi`)', () => {
    expect(readFileSync(fileURLToPath(OPENAPI_FILE), 'utf8')).toBe(serializedOpenApiDocument());
  });

  it('is served at GET /api/openapi.json', async () => {
    const response = await openApiGET();
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(serializedOpenApiDocument()));
  });

  it('describes the storefront endpoints, the webhooks, the two alias routes, the signature headers and the shipping secret', () => {
    expect(Object.keys(openApiDocument.paths).sort()).toEqual([
      '/api/cardprovider/webhook',
      '/api/express-checkout/shipping-rate',
      '/api/express-checkout/shipping-rates',
      '/api/payment-intent',
      '/api/shipping/webhook',
      '/api/shipstation/webhook',
      '/api/store/cancel-authorization',
      '/api/store/capture',
      '/api/store/refunds',
      '/api/stripe/webhook',
      '/api/submit-order',
    ]);
    const cardHeaders = openApiDocument.paths['/api/stripe/webhook'].post.parameters.map((p: { name: string }) => p.name);
    expect(cardHeaders).toEqual(['stripe-signature', 'cardprovider-signature']);
    const schemes = openApiDocument.components.securitySchemes;
    expect([schemes.ShippingSecretQuery, schemes.ShippingSecretHeader].map((s) => `${s.in}:${s.name}`)).toEqual([
      'query:secret',
      'header:x-webhook-secret',
    ]);
  });
});

describe('storefront endpoints answer as documented', () => {
  const withAddresses = (token: string) => ({ token, billing_address: billing });
  const wallet = { country: 'US', state: 'NY', postal_code: '10001', city: 'New York' };
  const endpoints = [
    { path: '/api/payment-intent', POST: paymentIntentPOST, OPTIONS: paymentIntentOPTIONS, rule: RATE_LIMITS.paymentIntent, orderId: 101, body: withAddresses },
    { path: '/api/submit-order', POST: submitOrderPOST, OPTIONS: submitOrderOPTIONS, rule: RATE_LIMITS.submitOrder, orderId: 102, body: withAddresses },
    {
      path: '/api/express-checkout/shipping-rates',
      POST: shippingRatesPOST,
      OPTIONS: shippingRatesOPTIONS,
      rule: RATE_LIMITS.shippingRates,
      orderId: 103,
      body: (token: string) => ({ token, address: wallet }),
    },
    {
      path: '/api/express-checkout/shipping-rate',
      POST: shippingRatePOST,
      OPTIONS: shippingRateOPTIONS,
      rule: RATE_LIMITS.shippingRate,
      orderId: 104,
      body: (token: string) => ({ token, shipping_rate_id: 'flat_rate:2', address: wallet }),
    },
  ];

  for (const endpoint of endpoints) {
    const call = (body: unknown, options: Parameters<typeof postJson>[2] = {}) =>
      endpoint.POST(postJson(endpoint.path, body, options)).then((r) => expectDocumentedResponse('POST', endpoint.path, r));

    it(`${endpoint.path}: 200 for a pending order`, async () => {
      providers.woo.seed({ id: endpoint.orderId, lines: [{ total: '10.00' }], shipping_total: '5.00', total_tax: '1.00' });
      configureShipping(providers.woo, { zones: [], restOfWorld: [{ type: 'flat_rate', instanceId: 2, cost: '15.00' }] });
      const body = await call({ ...endpoint.body(await tokenFor(endpoint.orderId)), contact_info: contact });
      expect(body).toMatchObject({ success: true });
    });

    it(`${endpoint.path}: 400 for an invalid body and for an order that cannot be paid`, async () => {
      expect(await call({ token: '' })).toMatchObject({ error: 'Invalid request' });
      providers.woo.seed({ id: endpoint.orderId, status: 'processing' });
      const notPayable = await call(endpoint.body(await tokenFor(endpoint.orderId)));
      expect(notPayable).toMatchObject({ details: { orderId: endpoint.orderId, reason: 'Order is already paid' } });
    });

    it(`${endpoint.path}: 413, 429 with its headers, and 500`, async () => {
      await call(TOO_LARGE_CHECKOUT);
      expect(await call(endpoint.body('not-a-checkout-token'))).toMatchObject({ success: false });
      const ip = freshIp();
      await awayFromWindowEdge();
      for (let i = 0; i < endpoint.rule.limit; i += 1) await endpoint.POST(postJson(endpoint.path, {}, { ip }));
      expect(await call({}, { ip })).toEqual({ error: 'Too many requests. Please try again later.' });
    });

    it(`${endpoint.path}: 503 with Retry-After while every store slot is taken`, async () => {
      useTestEnv({ STORE_MAX_CONCURRENCY: '1' });
      providers.woo.seed({ id: 109 });
      providers.woo.seed({ id: endpoint.orderId });
      const hold = providers.holdStore('GET', /\/orders\/109$/);
      const inFlight = submitOrderPOST(postJson('/api/submit-order', { token: await tokenFor(109), billing_address: billing }));
      await hold.reached;
      expect(await call(endpoint.body(await tokenFor(endpoint.orderId)))).toMatchObject({ error: { code: 'SHOP_BUSY' } });
      hold.release();
      await inFlight;
    });

    it(`${endpoint.path}: the preflight, 204 for the storefront and 403 for another origin`, async () => {
      const preflight = (origin: string) =>
        new Request(`http://localhost:3000${endpoint.path}`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        });
      await expectDocumentedResponse('OPTIONS', endpoint.path, await endpoint.OPTIONS(preflight(TEST_STOREFRONT_ORIGIN)));
      await expectDocumentedResponse('OPTIONS', endpoint.path, await endpoint.OPTIONS(preflight('https://elsewhere.test')));
    });
  }
});

describe('webhooks answer as documented', () => {
  const cardRoutes = [
    { path: '/api/cardprovider/webhook', POST: cardPOST, header: 'cardprovider-signature' },
    { path: '/api/stripe/webhook', POST: stripePOST, header: 'stripe-signature' },
  ];

  for (const route of cardRoutes) {
    const deliver = (payload: string, headers: Record<string, string> = {}, ip = freshIp()) =>
      route
        .POST(new Request(`http://localhost:3000${route.path}`, { method: 'POST', headers: { 'x-forwarded-for': ip, ...headers }, body: payload }))
        .then((r) => expectDocumentedResponse('POST', route.path, r));

    it(`${route.path}: 200 for a signed event, 400, 413 and 429`, async () => {
      const payload = JSON.stringify({ id: 'evt_contract', object: 'event', type: 'customer.created', data: { object: {} } });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET });
      expect(await deliver(payload, { [route.header]: signature })).toEqual({ received: true });
      expect(await deliver(payload)).toEqual({ error: 'Missing signature' });
      await deliver(TOO_LARGE_WEBHOOK, { [route.header]: signature });
      const ip = freshIp();
      await awayFromWindowEdge();
      for (let i = 0; i < RATE_LIMITS.cardWebhook.limit; i += 1) await deliver(payload, {}, ip);
      expect(await deliver(payload, {}, ip)).toEqual({ error: 'Too many requests' });
    });
  }

  const shippingRoutes = [
    { path: '/api/shipping/webhook', POST: shippingPOST },
    { path: '/api/shipstation/webhook', POST: shipStationPOST },
  ];

  for (const route of shippingRoutes) {
    const ship = (body: unknown, options: { query?: string; headers?: Record<string, string>; ip?: string } = {}) =>
      route
        .POST(postJson(`${route.path}${options.query ?? ''}`, body, { origin: null, ip: options.ip, headers: options.headers }))
        .then((r) => expectDocumentedResponse('POST', route.path, r));

    it(`${route.path}: 200 with the secret in the query or the header, 401 without, 400 for a cut body, 413 and 429`, async () => {
      useTestEnv({ SHIPPING_WEBHOOK_SECRET: 'shipping-contract-secret' });
      const notification = { resource_type: 'ORDER_NOTIFY' };
      expect(await ship(notification, { query: '?secret=shipping-contract-secret' })).toEqual({ received: true });
      expect(await ship(notification, { headers: { 'x-webhook-secret': 'shipping-contract-secret' } })).toEqual({ received: true });
      expect(await ship(notification)).toEqual({ error: 'Unauthorized' });
      await ship(TOO_LARGE_WEBHOOK, { query: '?secret=shipping-contract-secret' });
      // A body shorter than its Content-Length (the sender went away mid-body): 400, to be delivered again.
      const cut = new Request(`http://localhost:3000${route.path}?secret=shipping-contract-secret`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '500', 'x-forwarded-for': freshIp() },
        body: JSON.stringify(notification),
      });
      expect(await route.POST(cut).then((r) => expectDocumentedResponse('POST', route.path, r))).toEqual({ error: 'Request body was not received whole' });
      const ip = freshIp();
      await awayFromWindowEdge();
      for (let i = 0; i < RATE_LIMITS.shippingWebhook.limit; i += 1) await ship(notification, { ip });
      expect(await ship(notification, { ip })).toEqual({ error: 'Too many requests' });
    });

    it(`${route.path}: a ShipStation V2 delivery unsigned 404, stale 400, without its signing keys 503`, async () => {
      useTestEnv({ SHIPSTATION_V2_JWKS_URL: 'https://keys.unreachable.test/jwks' });
      const v2 = { resource_url: 'https://api.shipstation.com/v2/fulfillments', resource_type: 'FULFILLMENT_SHIPPED_V2' };
      const signed = (timestamp: string) => ({ 'x-shipengine-rsa-sha256-key-id': 'se-key-1', 'x-shipengine-rsa-sha256-signature': 'c2ln', 'x-shipengine-timestamp': timestamp });
      expect(await ship(v2)).toEqual({ error: 'Not found' });
      expect(await ship(v2, { headers: signed(new Date(Date.now() - 10 * 60_000).toISOString()) })).toEqual({ error: 'Invalid signature' });
      expect(await ship(v2, { headers: signed(new Date().toISOString()) })).toEqual({ error: 'Signing keys unavailable, try again' });
    });
  }
});

describe('the store’s calls answer as documented', () => {
  const call = (route: StoreRoute, body: unknown, options: Parameters<typeof storeRequest>[2] = {}) =>
    STORE_ROUTES[route].POST(storeRequest(route, body, options)).then((r) => expectDocumentedResponse('POST', STORE_ROUTES[route].path, r));

  it('/api/store/refunds: 200, 400, 401, 413, 502 and 503', async () => {
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET });
    await paidOrder(providers, 131);
    const saved = providers.woo.createRefund(131, { amount: '5.00', api_refund: false });
    const refund = { order_id: 131, refund_id: saved.id, amount: '5.00' };
    expect(await call('refunds', refund)).toMatchObject({ amount: '5.00' });
    expect(await call('refunds', { order_id: 'x' })).toMatchObject({ error: 'Invalid request' });
    expect(await call('refunds', { ...refund, amount: '6.00' })).toMatchObject({ error: expect.stringContaining('does not match') });
    expect(await call('refunds', refund, { secret: 'another-secret-of-the-same-length-0123456789' })).toEqual({ error: 'Unauthorized' });
    await call('refunds', JSON.stringify({ padding: 'x'.repeat(33 * 1024) }));
    const second = providers.woo.createRefund(131, { amount: '1.00', api_refund: false });
    providers.failCard('POST', /^\/v1\/refunds$/, 503, 'api_error', 'unavailable', 2);
    expect(await call('refunds', { ...refund, refund_id: second.id, amount: '1.00' })).toMatchObject({ error: expect.stringContaining('Stripe') });
    useTestEnv();
    expect(await call('refunds', refund)).toMatchObject({ error: expect.stringContaining('STORE_CALLBACK_SECRET') });
  });

  it('/api/store/capture and /api/store/cancel-authorization: 200, 400, 401, 413, 502 and 503', async () => {
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, STRIPE_CAPTURE: 'manual' });
    providers.woo.seed({ id: 132, lines: [{ total: '30.00' }] });
    const intent = providers.stripe.create({ amount: '3000', currency: 'usd', capture_method: 'manual', metadata: { shop_order_id: '132' } });
    providers.woo.update(132, { meta_data: [{ key: '_payment_intent_id', value: intent.id }] });
    providers.stripe.authorize(intent.id);
    for (const route of ['capture', 'cancelAuthorization'] as const) {
      expect(await call(route, { order_id: 132 }, { header: null })).toEqual({ error: 'Unauthorized' });
      expect(await call(route, { order_id: -132 })).toMatchObject({ error: 'Invalid request' });
      await call(route, JSON.stringify({ padding: 'x'.repeat(33 * 1024) }));
      providers.failStore('GET', /\/orders\/132$/, 503, 'internal_server_error', 2);
      expect(await call(route, { order_id: 132 })).toMatchObject({ error: expect.stringContaining('store') });
    }
    expect(await call('cancelAuthorization', { order_id: 132 })).toEqual({ canceled: true });
    expect(await call('capture', { order_id: 132 })).toMatchObject({ error: expect.stringContaining('cancelled') });
    expect(await call('cancelAuthorization', { order_id: 133 })).toMatchObject({ error: 'Order #133 was not found in the store.' });
    providers.woo.seed({ id: 134, lines: [{ total: '30.00' }] });
    expect(await call('capture', { order_id: 134 })).toMatchObject({ error: expect.stringContaining('not authorized') });
    const other = providers.stripe.create({ amount: '3000', currency: 'usd', capture_method: 'manual', metadata: { shop_order_id: '134' } });
    providers.woo.update(134, { meta_data: [{ key: '_payment_intent_id', value: other.id }] });
    providers.stripe.authorize(other.id);
    expect(await call('capture', { order_id: 134 })).toEqual({ captured: '30.00' });
    useTestEnv();
    for (const route of ['capture', 'cancelAuthorization'] as const) {
      expect(await call(route, { order_id: 132 })).toMatchObject({ error: expect.stringContaining('STORE_CALLBACK_SECRET') });
    }
  });

  it('409 while another request holds the order', async () => {
    useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, UPSTREAM_TIMEOUT_MS: '200' });
    let release!: () => void;
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    const held = getServices().orderLocks.withOrderLock(135, async () => {
      entered();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await holding;
    for (const route of ['refunds', 'capture', 'cancelAuthorization'] as const) {
      const body = route === 'refunds' ? { order_id: 135, refund_id: 1, amount: '1.00' } : { order_id: 135 };
      expect([route, await call(route, body)]).toEqual([route, { error: expect.stringContaining('Order is being processed') }]);
    }
    release();
    await held;
  });
});

afterAll(() => {
  // Every documented response was produced by a handler above: the document lists nothing the code never answers.
  expect(checkedResponses()).toEqual(documentedResponses());
});
