/**
 * Property-based tests of request parsing at every endpoint (no 5xx and no change from malformed input):
 * thousands of generated bodies, headers and payloads, hostile shapes included,
 * go through the real route handlers with the msw stand-ins behind them.
 *
 * For every input: no 5xx other than the spec's documented 500 of the checkout
 * endpoints (and never from an unexpected error), no write to the store, no
 * request to a host other than the configured providers, and no piece of the
 * input in the response. fast-check prints the seed and the shrunk input of a
 * failure ("Property failed after N tests { seed: …, path: … }"); replay it with
 * `fc.assert(property, { seed, path })`.
 */
import fc from 'fast-check';
import { http, HttpResponse } from 'msw';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as cardWebhook from '@/app/api/cardprovider/webhook/route';
import * as paymentIntent from '@/app/api/payment-intent/route';
import * as shippingWebhook from '@/app/api/shipping/webhook/route';
import * as submitOrder from '@/app/api/submit-order/route';
import { clientKey } from '@/lib/http/client-ip';
import { allowedOrigin } from '@/lib/http/origin';
import { verifyCheckoutToken } from '@/lib/security/checkout-token';
import { checkResourceUrl } from '@/lib/shipping/resource-url';
import { InvalidTokenError } from '@/lib/errors';
import { TEST_STOREFRONT_ORIGIN, TEST_TOKEN_SECRET, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { freshIp, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';
import { SHIPSTATION_BASE_URL, SHIPSTATION_ENV, ShipStationStandIn } from '../support/shipstation';

const { providers, server } = createProviders();
const shipStation = new ShipStationStandIn();
const KNOWN_HOSTS = new Set(['shop.test', 'api.stripe.com', new URL(SHIPSTATION_BASE_URL).host]);
const outgoingHosts: string[] = [];
const unhandled: string[] = [];

beforeAll(() => {
  server.events.on('request:start', ({ request }) => {
    outgoingHosts.push(new URL(request.url).host);
  });
  server.events.on('request:unhandled', ({ request }) => {
    unhandled.push(new URL(request.url).host);
  });
  server.listen({ onUnhandledRequest: 'error' });
});
afterAll(() => server.close());

beforeEach(() => {
  useTestEnv(SHIPSTATION_ENV);
  providers.reset();
  shipStation.reset();
  // Other paths on ShipStation's origin are allowed resource URLs the stand-in does not serve: 404.
  server.use(http.all(`${SHIPSTATION_BASE_URL}/*`, () => HttpResponse.json({ Message: 'not found' }, { status: 404 })));
  server.use(...shipStation.handlers);
  outgoingHosts.length = 0;
  unhandled.length = 0;
});

afterEach(() => {
  server.resetHandlers();
});

/** Checked after every generated request, so a failure is reported with its seed and input. */
function expectNoSideEffects(): void {
  expect(providers.calls.filter((call) => call.method !== 'GET')).toEqual([]);
  expect(unhandled).toEqual([]);
  expect(outgoingHosts.filter((host) => !KNOWN_HOSTS.has(host))).toEqual([]);
  expect(loggedLines().filter((line) => line.event === 'request.unexpected_error')).toEqual([]);
}

/** Every generated string carries this marker, so an echo of any of them is easy to find. */
const MARK = 'ECHO_';

const hostileText = fc
  .oneof(
    fc.constantFrom(
      '<script>alert(1)</script>',
      '"><img src=x onerror=alert(1)>',
      'javascript:alert(1)',
      "' OR 1=1 --",
      '${7*7}{{7*7}}',
      '../../etc/passwd',
      '\u202eevil\u0000\u0007',
      '%00%0d%0aSet-Cookie: x=1',
      'https://evil.example/phish',
      '__proto__',
    ),
    fc.string({ maxLength: 60 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.nat({ max: 5000 }).map((n) => 'x'.repeat(n)),
  )
  .map((text) => `${MARK}${text}`);

/** Any JSON-ish value, with hostile strings at the leaves. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText,
    fc.constantFrom(null, true, false, 0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, 0.1),
    fc.integer(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('__proto__', 'constructor', 'email', 'id')), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value;

const address = fc.oneof(
  hostileValue,
  fc.record(
    {
      first_name: hostileText,
      city: hostileText,
      country: fc.oneof(hostileText, fc.constantFrom('GB', 'US')),
      email: fc.oneof(hostileText, fc.emailAddress()),
      phone: hostileText,
      status: fc.constantFrom('completed', 'processing'),
      total: fc.constantFrom('0.00', '-5'),
      meta_data: fc.constant([{ key: '_paid_date', value: 'now' }]),
    },
    { requiredKeys: [] },
  ),
);

const checkoutBody = fc.oneof(
  hostileValue,
  fc.record(
    {
      token: fc.oneof(hostileText, hostileValue),
      billing_address: address,
      shipping_address: fc.oneof(address, fc.constant(null)),
      contact_info: fc.oneof(hostileValue, fc.record({ email: fc.oneof(hostileText, fc.emailAddress()), phone: hostileText }, { requiredKeys: [] })),
      amount: fc.integer(),
      status: fc.constant('processing'),
    },
    { requiredKeys: [] },
  ),
);

/** Header values a client could send (visible ASCII and spaces; fetch refuses CR, LF and NUL). */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });

function rawBody(body: unknown): string {
  return typeof body === 'string' && body.startsWith('RAW:') ? body.slice(4) : JSON.stringify(body) ?? 'undefined';
}

const rawOrJson = fc.oneof(
  checkoutBody,
  fc.oneof(fc.constantFrom('{', '[1,', '{"token":', '\u0000', '', 'null', 'true', '{"token":"a"}}'), fc.string({ maxLength: 40 })).map((s) => `RAW:${s}`),
);

async function responseText(response: Response): Promise<string> {
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  return response.text();
}

/** Answers the spec allows the checkout endpoints for input that cannot name a payable order. */
const CHECKOUT_500_MESSAGES = new Set(['Checkout token is invalid or expired', 'Request origin is not allowed', 'Store request failed: get order']);

describe.each([
  { name: 'payment-intent', route: paymentIntent, code: 'PAYMENT_INTENT_ERROR' },
  { name: 'submit-order', route: submitOrder, code: 'SUBMIT_ORDER_ERROR' },
])('$name: generated bodies and headers', ({ name, route, code }) => {
  it('answer 400, 413 or the documented 500, write nothing and echo nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        rawOrJson,
        fc.record({ origin: fc.oneof(fc.constant(TEST_STOREFRONT_ORIGIN), fc.constant('null'), headerText), referer: headerText }, { requiredKeys: [] }),
        async (body, headers) => {
          const response = await route.POST(
            new Request(`http://localhost:3000/api/${name}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp(), ...headers },
              body: rawBody(body),
            }),
          );
          const text = await responseText(response);
          expect([400, 413, 500]).toContain(response.status);
          if (response.status === 500) {
            const parsed = JSON.parse(text) as { success: boolean; error: { code: string; message: string } };
            expect(parsed.success).toBe(false);
            expect(parsed.error.code).toBe(code);
            expect(CHECKOUT_500_MESSAGES).toContain(parsed.error.message);
          }
          expect(text).not.toContain(MARK);
          expectNoSideEffects();
        },
      ),
      { numRuns: 250 },
    );
  });

  it('valid tokens with hostile bodies never write to a paid order nor echo the input', async () => {
    providers.woo.seed({ id: 77, status: 'processing' });
    const token = await tokenFor(77);
    await fc.assert(
      fc.asyncProperty(checkoutBody, async (body) => {
        const withToken = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, token } : body;
        const response = await route.POST(
          new Request(`http://localhost:3000/api/${name}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: TEST_STOREFRONT_ORIGIN, 'x-forwarded-for': freshIp() },
            body: JSON.stringify(withToken),
          }),
        );
        const text = await responseText(response);
        expect([400, 413]).toContain(response.status);
        expect(text).not.toContain(MARK);
        expectNoSideEffects();
      }),
      { numRuns: 150 },
    );
  });
});

describe('card webhook: signature headers and signed hostile events', () => {
  it('random signature headers and bodies are refused with 400 and change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(headerText, fc.constantFrom('t=1,v1=abc', 't=,v1=', 'v1=' + 'a'.repeat(64), 't=9999999999,v1=00,v0=11')),
        rawOrJson,
        async (signature, body) => {
          const response = await cardWebhook.POST(
            new Request('http://localhost:3000/api/cardprovider/webhook', {
              method: 'POST',
              headers: { 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
              body: rawBody(body),
            }),
          );
          const text = await responseText(response);
          expect(response.status).toBe(400);
          expect(text).not.toContain(MARK);
          expectNoSideEffects();
        },
      ),
      { numRuns: 300 },
    );
  });

  const orderIdValue = fc.oneof(
    fc.constantFrom('1', '0', '-1', '1e3', ' 12', '12 ', '0x10', '9007199254740993', '99999999999999999999', '١٢'),
    hostileValue,
  );
  const hostileIntent = fc.record(
    {
      id: fc.oneof(fc.constant('pi_fuzz'), hostileValue),
      amount: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 2 ** 53, '1000'), hostileValue),
      currency: fc.oneof(fc.constantFrom('usd', 'USD', 'jpy', 'kwd', 'xx'), hostileValue),
      metadata: fc.oneof(fc.record({ shop_order_id: orderIdValue }), hostileValue),
      latest_charge: fc.oneof(fc.constant('ch_x'), fc.record({ id: hostileValue }), hostileValue),
      last_payment_error: fc.oneof(fc.record({ message: hostileValue }), hostileValue),
    },
    { requiredKeys: [] },
  );
  const hostileEvent = fc.oneof(
    hostileValue,
    fc.record(
      {
        id: fc.oneof(fc.string({ minLength: 1, maxLength: 30 }).map((s) => `evt_${s}`), hostileValue),
        type: fc.oneof(fc.constantFrom('payment_intent.succeeded', 'payment_intent.payment_failed', 'charge.refunded'), hostileValue),
        data: fc.oneof(fc.record({ object: fc.oneof(hostileIntent, hostileValue) }), hostileValue),
      },
      { requiredKeys: [] },
    ),
  );

  it('correctly signed events of any shape answer 200 or 400, never 5xx, and write nothing', async () => {
    await fc.assert(
      fc.asyncProperty(hostileEvent, async (event) => {
        const payload = JSON.stringify(event) ?? 'null';
        const response = await cardWebhook.POST(
          new Request('http://localhost:3000/api/cardprovider/webhook', {
            method: 'POST',
            headers: {
              'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }),
              'x-forwarded-for': freshIp(),
            },
            body: payload,
          }),
        );
        const text = await responseText(response);
        expect([200, 400]).toContain(response.status);
        expect(text).not.toContain(MARK);
        expectNoSideEffects();
      }),
      { numRuns: 400 },
    );
  });
});

describe('shipping webhook: generated payloads and resource URLs', () => {
  const resourceUrl = fc.oneof(
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.constantFrom(
      `${SHIPSTATION_BASE_URL}/shipments?batchId=1`,
      `${SHIPSTATION_BASE_URL}.evil.example/shipments`,
      'https://user:pass@ssapi.shipstation.com/shipments',
      'https://ssapi.shipstation.com:8443/shipments',
      'http://ssapi.shipstation.com/shipments',
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:6379/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      '//ssapi.shipstation.com/shipments',
      'https://SSAPI.ShipStation.com./shipments',
      'https://ssapi.shipstation.com\\@evil.example/',
    ),
    hostileText,
  );
  const payload = fc.oneof(
    hostileValue,
    fc.record(
      {
        resource_type: fc.oneof(fc.constantFrom('SHIP_NOTIFY', 'ITEM_SHIPPED', 'ITEM_SHIP_NOTIFY', 'ORDER_NOTIFY'), hostileValue),
        resource_url: fc.oneof(resourceUrl, hostileValue),
        order_number: fc.oneof(fc.constantFrom('1', '0', '00012', '1e2', '-4', ' 7'), hostileValue),
        tracking_number: fc.oneof(hostileText, hostileValue),
        carrier: fc.oneof(hostileText, hostileValue),
        ship_date: fc.oneof(hostileText, hostileValue),
      },
      { requiredKeys: [] },
    ),
  );

  it('every payload is answered 200 {received: true}, with no write and no request outside ShipStation and the store', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(payload, fc.string({ maxLength: 40 }).map((s) => `RAW:${s}`)), async (body) => {
        const response = await shippingWebhook.POST(
          new Request('http://localhost:3000/api/shipping/webhook', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp() },
            body: rawBody(body),
          }),
        );
        expect(response.status).toBe(200);
        expect(await responseText(response)).toBe('{"received":true}');
        expectNoSideEffects();
      }),
      { numRuns: 400 },
    );
  });

  it('an allowed resource_url is always on the ShipStation origin, under its path, without credentials', () => {
    fc.assert(
      fc.property(resourceUrl, (url) => {
        const check = checkResourceUrl(url, SHIPSTATION_BASE_URL);
        if (!check.allowed) return;
        expect(check.url.origin).toBe(SHIPSTATION_BASE_URL);
        expect(check.url.username + check.url.password).toBe('');
      }),
      { numRuns: 3000 },
    );
  });
});

describe('tokens, origins and client addresses', () => {
  it('a token that is not one the service minted fails only as an invalid token', async () => {
    const valid = await tokenFor(5);
    const [head, body, signature] = valid.split('.') as [string, string, string];
    const mutated = fc.oneof(
      hostileText,
      fc.string({ maxLength: 40 }).map((s) => `${head}.${body}.${s}`),
      fc.string({ maxLength: 40 }).map((s) => `${head}.${s}.${signature}`),
      fc.constantFrom('eyJhbGciOiJub25lIn0.eyJzdWIiOiI1IiwiZXhwIjo5OTk5OTk5OTk5fQ.', `${head}.${body}`, `${valid}.`, `${valid}x`),
    );
    await fc.assert(
      fc.asyncProperty(mutated, async (token) => {
        await expect(verifyCheckoutToken(token, { secret: TEST_TOKEN_SECRET })).rejects.toBeInstanceOf(InvalidTokenError);
      }),
      { numRuns: 1000 },
    );
  });

  it('no generated Origin or Referer is allowed unless it is exactly an allowed origin', () => {
    fc.assert(
      fc.property(fc.option(headerText), fc.option(fc.oneof(headerText, fc.webUrl())), (origin, referer) => {
        const headers = new Headers();
        if (origin !== null) headers.set('origin', origin);
        if (referer !== null) headers.set('referer', referer);
        const allowed = allowedOrigin(headers, [TEST_STOREFRONT_ORIGIN]);
        if (allowed !== undefined) {
          expect(allowed).toBe(TEST_STOREFRONT_ORIGIN);
          if (origin !== null) expect(origin.trim()).toBe(TEST_STOREFRONT_ORIGIN);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('any header value gives a bounded key; one address in any spelling gives one key', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (value) => {
        const key = clientKey(value);
        if (key !== undefined) expect(key.length).toBeLessThanOrEqual(45);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 1, max: 65535 }), (ip, port) => {
        const key = clientKey(ip);
        expect(key).toMatch(/^([0-9a-f]{1,4}:){4}:\/64$|^\d{1,3}(\.\d{1,3}){3}$/);
        expect(clientKey(`[${ip}]:${port}`)).toBe(key);
        expect(clientKey(ip.toUpperCase())).toBe(key);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), (ip, port) => {
        expect(clientKey(`${ip}:${port}`)).toBe(ip);
        expect(clientKey(`::ffff:${ip}`)).toBe(ip);
      }),
      { numRuns: 3000 },
    );
  });
});
