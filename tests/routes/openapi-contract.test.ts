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
import { POST as shippingPOST } from '@/app/api/shipping/webhook/route';
import { POST as shipStationPOST } from '@/app/api/shipstation/webhook/route';
import { POST as stripePOST } from '@/app/api/stripe/webhook/route';
import { OPTIONS as submitOrderOPTIONS, POST as submitOrderPOST } from '@/app/api/submit-order/route';
import { OPENAPI_FILE, serializedOpenApiDocument } from '@/lib/openapi/file';
import { RATE_LIMITS } from '@/lib/security/rate-limit';
import { TEST_STOREFRONT_ORIGIN, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { checkedResponses, documentedResponses, expectDocumentedResponse, openApiDocument } from '../support/openapi';
import { useProviders } from '../support/providers';
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

  it('describes the four endpoints, the two alias routes, the signature headers and the shipping secret', () => {
    expect(Object.keys(openApiDocument.paths).sort()).toEqual([
      '/api/cardprovider/webhook',
      '/api/payment-intent',
      '/api/shipping/webhook',
      '/api/shipstation/webhook',
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
  const endpoints = [
    { path: '/api/payment-intent', POST: paymentIntentPOST, OPTIONS: paymentIntentOPTIONS, rule: RATE_LIMITS.paymentIntent, orderId: 101 },
    { path: '/api/submit-order', POST: submitOrderPOST, OPTIONS: submitOrderOPTIONS, rule: RATE_LIMITS.submitOrder, orderId: 102 },
  ];

  for (const endpoint of endpoints) {
    const call = (body: unknown, options: Parameters<typeof postJson>[2] = {}) =>
      endpoint.POST(postJson(endpoint.path, body, options)).then((r) => expectDocumentedResponse('POST', endpoint.path, r));

    it(`${endpoint.path}: 200 for a pending order`, async () => {
      providers.woo.seed({ id: endpoint.orderId, lines: [{ total: '10.00' }], shipping_total: '5.00', total_tax: '1.00' });
      const body = await call({ token: await tokenFor(endpoint.orderId), billing_address: billing, contact_info: contact });
      expect(body).toMatchObject({ success: true });
    });

    it(`${endpoint.path}: 400 for an invalid body and for an order that cannot be paid`, async () => {
      expect(await call({ token: '' })).toMatchObject({ error: 'Invalid request' });
      providers.woo.seed({ id: endpoint.orderId, status: 'processing' });
      const notPayable = await call({ token: await tokenFor(endpoint.orderId), billing_address: billing });
      expect(notPayable).toMatchObject({ details: { orderId: endpoint.orderId, reason: 'Order is already paid' } });
    });

    it(`${endpoint.path}: 413, 429 with its headers, and 500`, async () => {
      await call(TOO_LARGE_CHECKOUT);
      expect(await call({ token: 'not-a-checkout-token', billing_address: billing })).toMatchObject({ success: false });
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
      expect(await call({ token: await tokenFor(endpoint.orderId), billing_address: billing })).toMatchObject({ error: { code: 'SHOP_BUSY' } });
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

    it(`${route.path}: 200 with the secret in the query or the header, 401 without, 413 and 429`, async () => {
      useTestEnv({ SHIPPING_WEBHOOK_SECRET: 'shipping-contract-secret' });
      const notification = { resource_type: 'ORDER_NOTIFY' };
      expect(await ship(notification, { query: '?secret=shipping-contract-secret' })).toEqual({ received: true });
      expect(await ship(notification, { headers: { 'x-webhook-secret': 'shipping-contract-secret' } })).toEqual({ received: true });
      expect(await ship(notification)).toEqual({ error: 'Unauthorized' });
      await ship(TOO_LARGE_WEBHOOK, { query: '?secret=shipping-contract-secret' });
      const ip = freshIp();
      await awayFromWindowEdge();
      for (let i = 0; i < RATE_LIMITS.shippingWebhook.limit; i += 1) await ship(notification, { ip });
      expect(await ship(notification, { ip })).toEqual({ error: 'Too many requests' });
    });
  }
});

afterAll(() => {
  // Every documented response was produced by a handler above: the document lists nothing the code never answers.
  expect(checkedResponses()).toEqual(documentedResponses());
});
