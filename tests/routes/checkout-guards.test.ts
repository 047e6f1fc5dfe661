/**
 * What both checkout endpoints do before the use case: rate limit, origin,
 * CORS, body limits and validation (docs/contract.md#spec-4-1, docs/contract.md#spec-4-2 processing order, docs/contract.md#spec-7, docs/contract.md#spec-8).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import * as paymentIntent from '@/app/api/payment-intent/route';
import * as submitOrder from '@/app/api/submit-order/route';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { awayFromWindowEdge, postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
  providers.woo.seed({ id: 600, lines: [{ total: '12.00' }] });
});

const routes = [
  { name: 'payment-intent', path: '/api/payment-intent', handlers: paymentIntent, code: 'PAYMENT_INTENT_ERROR' },
  { name: 'submit-order', path: '/api/submit-order', handlers: submitOrder, code: 'SUBMIT_ORDER_ERROR' },
] as const;

const billing = { first_name: 'Ada', city: 'London', country: 'GB' };

describe.each(routes)('$name guards', ({ path, handlers, code }) => {
  const post = (body: unknown, options: Parameters<typeof postJson>[2] = {}) => handlers.POST(postJson(path, body, options));

  it('answers the 11th request in a window with 429 and the rate-limit headers, doing nothing else', async () => {
    const token = await tokenFor(600);
    const ip = '203.0.113.50';
    await awayFromWindowEdge();
    for (let i = 0; i < 10; i += 1) {
      expect((await post({ token, billing_address: billing }, { ip })).status).not.toBe(429);
    }
    const callsBefore = providers.calls.length;
    const response = await post({ token, billing_address: billing }, { ip });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({ error: 'Too many requests. Please try again later.' });
    expect(response.headers.get('x-ratelimit-limit')).toBe('10');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
    const reset = Date.parse(response.headers.get('x-ratelimit-reset')!);
    expect(reset).toBeGreaterThan(Date.now());
    expect(reset).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(response.headers.get('x-ratelimit-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(providers.calls.length).toBe(callsBefore);
  });

  it('gives no fresh counter to a client that forges X-Forwarded-For prefixes', async () => {
    await awayFromWindowEdge();
    for (let i = 0; i < 10; i += 1) {
      await post({ token: 'x' }, { headers: { 'x-forwarded-for': `192.0.2.${i}, 203.0.113.60` } });
    }
    const forged = await post({ token: 'x' }, { headers: { 'x-forwarded-for': '192.0.2.99, 203.0.113.60' } });
    expect(forged.status).toBe(429);
    const other = await post({ token: 'x' }, { headers: { 'x-forwarded-for': '203.0.113.61' } });
    expect(other.status).not.toBe(429);
  });

  it('behind an nginx that sets only X-Real-IP (CLIENT_IP_HEADER), counts each shopper apart from the proxy', async () => {
    useTestEnv({ CLIENT_IP_HEADER: 'X-Real-IP' });
    // next start fills the missing X-Forwarded-For with the proxy's socket address: the same for every shopper.
    const viaProxy = (realIp: string) => ({ headers: { 'x-forwarded-for': '10.9.9.9', 'x-real-ip': realIp } });
    await awayFromWindowEdge();
    for (let i = 0; i < 10; i += 1) await post({ token: 'x' }, viaProxy('203.0.113.70:40000'));
    expect((await post({ token: 'x' }, viaProxy('203.0.113.70:40001'))).status).toBe(429);
    expect((await post({ token: 'x' }, viaProxy('203.0.113.71'))).status).not.toBe(429);
  });

  it('counts requests before checking the origin', async () => {
    const ip = '203.0.113.70';
    await awayFromWindowEdge();
    for (let i = 0; i < 10; i += 1) await post({ token: 'x' }, { ip, origin: 'https://evil.test' });
    expect((await post({ token: 'x' }, { ip })).status).toBe(429);
  });

  it.each([
    ['a foreign origin', { origin: 'https://evil.test' }],
    ['a look-alike origin', { origin: 'https://storefront.test.evil.test' }],
    ['another scheme', { origin: 'http://storefront.test' }],
    ['another port', { origin: 'https://storefront.test:8443' }],
    ['no origin at all', { origin: null }],
  ])('refuses %s with the endpoint 500 and no CORS grant, before reading the body', async (_label, options) => {
    const response = await post({ token: await tokenFor(600), billing_address: billing }, options);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ success: false, error: { code, message: 'Request origin is not allowed' } });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(providers.calls).toHaveLength(0);
  });

  it('accepts the origin of the Referer when there is no Origin header', async () => {
    const response = await post(
      { token: await tokenFor(600), billing_address: billing },
      { origin: null, headers: { referer: 'https://storefront.test/checkout/step-2' } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://storefront.test');
  });

  it('answers the preflight of an allowed origin with 204 and the CORS grant', async () => {
    const response = await handlers.OPTIONS(
      new Request(`http://localhost:3000${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:3001', 'access-control-request-method': 'POST' },
      }),
    );
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:3001');
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toBe('Content-Type');
    expect(response.headers.get('vary')).toBe('Origin');
  });

  it('gives an unlisted origin no grant in the preflight', async () => {
    const response = await handlers.OPTIONS(
      new Request(`http://localhost:3000${path}`, { method: 'OPTIONS', headers: { origin: 'https://evil.test' } }),
    );
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it.each([
    ['malformed JSON', '{"token": '],
    ['an array', '[1,2]'],
    ['a string', '"hello"'],
    ['null', 'null'],
    ['an empty body', ''],
  ])('answers %s with 400 Invalid request and zod issues, changing nothing', async (_label, raw) => {
    const response = await post(raw);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe('Invalid request');
    expect(Array.isArray(body.details)).toBe(true);
    expect(body.details[0]).toHaveProperty('message');
    expect(providers.calls).toHaveLength(0);
  });

  it('answers wrong types and invalid emails with 400 and the path of each issue', async () => {
    const response = await post({
      token: 42,
      billing_address: { first_name: ['x'], email: 'not-an-email' },
      shipping_address: 'somewhere',
      contact_info: { email: 'nope' },
    });
    expect(response.status).toBe(400);
    const paths = (await response.json()).details.map((issue: { path: (string | number)[] }) => issue.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining(['token', 'billing_address.first_name', 'billing_address.email', 'shipping_address', 'contact_info.email']),
    );
    expect(providers.calls).toHaveLength(0);
  });

  it('refuses a body over 32 KiB with 413 and changes nothing', async () => {
    const response = await post({ token: await tokenFor(600), billing_address: { ...billing, company: 'x'.repeat(40_000) } });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'Payload too large' });
    expect(providers.calls).toHaveLength(0);
  });

  it('answers an unconfigured service with a clear 500 naming the missing variable', async () => {
    useTestEnv({ CHECKOUT_TOKEN_SECRET: undefined });
    const response = await post({ token: 'x', billing_address: billing });
    expect(response.status).toBe(500);
    expect((await response.json()).error).toEqual({ code, message: 'The service is not configured: set CHECKOUT_TOKEN_SECRET' });
  });
});

describe('separate counters', () => {
  it('keeps one counter per endpoint', async () => {
    const ip = '203.0.113.80';
    await awayFromWindowEdge();
    for (let i = 0; i < 10; i += 1) await paymentIntent.POST(postJson('/api/payment-intent', { token: 'x' }, { ip }));
    expect((await paymentIntent.POST(postJson('/api/payment-intent', { token: 'x' }, { ip }))).status).toBe(429);
    expect((await submitOrder.POST(postJson('/api/submit-order', { token: 'x' }, { ip }))).status).not.toBe(429);
  });
});

describe('invalid configuration', () => {
  it('answers 500 "configuration is invalid" and logs the variable names, never their values', async () => {
    useTestEnv({ STRIPE_SECRET_KEY: 'pk_test_SHOULD_NOT_APPEAR' });
    const response = await paymentIntent.POST(postJson('/api/payment-intent', { token: 'x' }));
    expect(response.status).toBe(500);
    expect((await response.json()).error).toEqual({ code: 'PAYMENT_INTENT_ERROR', message: 'The service configuration is invalid' });
    const logs = JSON.stringify(loggedLines());
    expect(logs).toContain('STRIPE_SECRET_KEY');
    expect(logs).not.toContain('SHOULD_NOT_APPEAR');
  });
});
