/**
 * The storefront client (client/) against the real route handlers: the built
 * package is what is tested, its fetch hands each request to the exported POST
 * handler as the browser's request would arrive, and msw plays the store and
 * the card provider. One test per result and per error class.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { POST as submitOrderPOST } from '@/app/api/submit-order/route';
import { POST as shippingRatePOST } from '@/app/api/express-checkout/shipping-rate/route';
import { POST as shippingRatesPOST } from '@/app/api/express-checkout/shipping-rates/route';
import type * as ClientModule from '@/client/index';
import { buildClient } from '@/scripts/build-client';
import { TEST_STOREFRONT_ORIGIN, useTestEnv } from '../support/env';
import { expressShop } from '../support/express-shop';
import { useProviders } from '../support/providers';
import { awayFromWindowEdge, freshIp, postJson, tokenFor } from '../support/requests';

const providers = useProviders();
const outDir = mkdtempSync(join(tmpdir(), 'storefront-client-'));
const bundle = join(outDir, 'index.js');
let client: typeof ClientModule;
let inputs: string[];

beforeAll(async () => {
  const result = await buildClient(outDir);
  inputs = Object.keys(result.metafile.inputs);
  client = (await import(pathToFileURL(bundle).href)) as typeof ClientModule;
});

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const ROUTES: Record<string, (request: Request) => Promise<Response>> = {
  '/api/payment-intent': paymentIntentPOST,
  '/api/submit-order': submitOrderPOST,
  '/api/express-checkout/shipping-rates': shippingRatesPOST,
  '/api/express-checkout/shipping-rate': shippingRatePOST,
};

/** A fetch that delivers to the route handlers, with the Origin and client address a browser's request would carry. */
function serviceFetch(ip = freshIp()): { fetch: typeof fetch; responses: Response[] } {
  const responses: Response[] = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set('origin', TEST_STOREFRONT_ORIGIN);
    headers.set('x-forwarded-for', ip);
    const request = new Request(input, { ...init, headers });
    const route = ROUTES[new URL(request.url).pathname];
    if (!route) throw new Error(`no route for ${request.url}`);
    const response = await route(request);
    responses.push(response.clone());
    return response;
  };
  return { fetch: fetchImpl as typeof fetch, responses };
}

const billing = { first_name: 'Ada', last_name: 'Lovelace', address_1: '12 Analytical Row', city: 'London', postcode: 'N1 7AA', country: 'GB' };
const contact = { email: 'ada@example.com', phone: '+44 20 7946 0000' };

function newClient(fetchImpl: typeof fetch) {
  return client.createCheckoutClient({ baseUrl: 'https://checkout.test/', fetch: fetchImpl });
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('the built client', () => {
  it('index.js holds only the client: it imports nothing, from the service or elsewhere', () => {
    expect(inputs).toEqual(['client/index.ts', 'client/server.ts']);
    const text = readFileSync(bundle, 'utf8');
    expect(text).not.toMatch(/\bimport\b|require\(|zod/);
    expect(text).toMatch(/export \{[^}]*createCheckoutClient/);
  });
});

describe('results', () => {
  it('createPaymentIntent returns the client secret of the order’s intent', async () => {
    providers.woo.seed({ id: 301, lines: [{ total: '20.00' }], shipping_total: '0.00', total_tax: '0.00' });
    const result = await newClient(serviceFetch().fetch).createPaymentIntent({
      token: await tokenFor(301),
      billing_address: billing,
      shipping_address: null,
      contact_info: contact,
    });
    const intent = [...providers.stripe.intents.values()][0]!;
    expect(result).toEqual({ success: true, client_secret: intent.client_secret, payment_intent_id: intent.id });
    expect(intent.amount).toBe(2000);
  });

  it('submitOrder returns the order id and the server-computed total', async () => {
    providers.woo.seed({ id: 302, lines: [{ total: '40.00' }], shipping_total: '4.35', total_tax: '3.65' });
    const result = await newClient(serviceFetch().fetch).submitOrder({ token: await tokenFor(302), billing_address: billing });
    expect(result).toEqual({ success: true, order_id: 302, total: 4800, currency: 'USD' });
  });
});

describe('express checkout', () => {
  const TORONTO = { country: 'CA', state: 'ON', postal_code: 'M5V', city: 'Toronto' };

  it('shippingRates returns the store’s rates at the wallet’s address, each with the order’s total there', async () => {
    expressShop(providers);
    providers.woo.seed({ id: 311, currency: 'CAD', lines: [{ total: '60.00' }] });
    const result = await newClient(serviceFetch().fetch).shippingRates({ token: await tokenFor(311), address: TORONTO });
    expect(result.currency).toBe('cad');
    expect(result.shipping_rates.map(({ id, amount, total }) => [id, amount, total])).toEqual([
      ['flat_rate:1', 1130, 7910],
      ['free_shipping:3', 0, 6780],
    ]);
    expect(providers.orderUpdates(311)).toEqual([]);
  });

  it('chooseShippingRate returns the order’s new total, which the order’s intent now holds', async () => {
    expressShop(providers);
    providers.woo.seed({ id: 312, currency: 'CAD', lines: [{ total: '20.00' }] });
    const token = await tokenFor(312);
    const checkout = newClient(serviceFetch().fetch);
    const { payment_intent_id } = await checkout.createPaymentIntent({ token });
    const chosen = await checkout.chooseShippingRate({ token, shipping_rate_id: 'flat_rate:1', address: TORONTO });
    expect(chosen).toEqual({
      success: true,
      currency: 'cad',
      total: 3390,
      shipping_rate: { id: 'flat_rate:1', label: 'Flat rate', amount: 1130 },
      line_items: [
        { name: 'Subtotal', amount: 2000 },
        { name: 'Shipping', amount: 1000 },
        { name: 'Tax', amount: 390 },
      ],
    });
    expect(providers.stripe.intents.get(payment_intent_id)!.amount).toBe(3390);
  });

  it('a rate the store does not offer at the address is an InvalidRequest on shipping_rate_id', async () => {
    expressShop(providers);
    providers.woo.seed({ id: 313, currency: 'CAD', lines: [{ total: '20.00' }] });
    const error = await caught(newClient(serviceFetch().fetch).chooseShippingRate({ token: await tokenFor(313), shipping_rate_id: 'flat_rate:2', address: TORONTO }));
    expect(error).toBeInstanceOf(client.InvalidRequest);
    expect((error as ClientModule.InvalidRequest).issues.map((issue) => issue.path.join('.'))).toEqual(['shipping_rate_id']);
  });

  it('an invalid token is a ServiceError with EXPRESS_CHECKOUT_ERROR', async () => {
    const error = await caught(newClient(serviceFetch().fetch).shippingRates({ token: 'not-a-token', address: TORONTO }));
    expect(error).toBeInstanceOf(client.ServiceError);
    expect(error).toMatchObject({ status: 500, code: 'EXPRESS_CHECKOUT_ERROR' });
  });
});

describe('errors', () => {
  it('InvalidRequest carries zod’s issues', async () => {
    const error = await caught(newClient(serviceFetch().fetch).submitOrder({ token: '', billing_address: { country: 'GBR' } }));
    expect(error).toBeInstanceOf(client.InvalidRequest);
    const issues = (error as ClientModule.InvalidRequest).issues;
    expect(issues.map((issue) => issue.path.join('.')).sort()).toEqual(['billing_address.country', 'token']);
    expect((error as ClientModule.InvalidRequest).status).toBe(400);
  });

  it('NotPayable carries the order, its status and the reason', async () => {
    providers.woo.seed({ id: 303, status: 'processing' });
    const error = await caught(newClient(serviceFetch().fetch).createPaymentIntent({ token: await tokenFor(303) }));
    expect(error).toBeInstanceOf(client.NotPayable);
    expect(error).toMatchObject({ orderId: 303, orderStatus: 'processing', reason: 'Order is already paid', message: 'Order cannot be paid' });
  });

  it('RateLimited carries the reset time and the limit, readable by a browser across origins', async () => {
    providers.woo.seed({ id: 304 });
    const token = await tokenFor(304);
    const service = serviceFetch();
    const checkout = newClient(service.fetch);
    await awayFromWindowEdge();
    for (let i = 0; i < 10; i += 1) await checkout.createPaymentIntent({ token });
    const before = Date.now();
    const error = await caught(checkout.createPaymentIntent({ token }));
    expect(error).toBeInstanceOf(client.RateLimited);
    const { resetAt, limit, status } = error as ClientModule.RateLimited;
    expect(status).toBe(429);
    expect(limit).toBe(10);
    expect(resetAt!.getTime()).toBeGreaterThan(before);
    expect(resetAt!.getTime()).toBeLessThanOrEqual(before + 60_000);
    // Without this grant a browser's fetch sees no X-RateLimit-* header on a cross-origin answer.
    const exposed = service.responses.at(-1)!.headers.get('access-control-expose-headers')!.toLowerCase();
    expect(exposed.split(/\s*,\s*/)).toEqual(expect.arrayContaining(['x-ratelimit-reset', 'x-ratelimit-limit']));
  });

  it('ServiceError carries the service’s error code for any other failure (here an invalid token)', async () => {
    const error = await caught(newClient(serviceFetch().fetch).submitOrder({ token: 'not-a-token', billing_address: billing }));
    expect(error).toBeInstanceOf(client.ServiceError);
    expect(error).toMatchObject({ status: 500, code: 'SUBMIT_ORDER_ERROR' });
    expect((error as Error).message).toMatch(/token/i);
  });

  it('ServiceError with NETWORK_ERROR when no answer arrives; an abort stays an abort', async () => {
    const unreachable = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    const error = await caught(newClient(unreachable).createPaymentIntent({ token: 't' }));
    expect(error).toBeInstanceOf(client.ServiceError);
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', status: undefined });

    const controller = new AbortController();
    controller.abort();
    const aborting = (async (_input: unknown, init?: RequestInit) => {
      init?.signal?.throwIfAborted();
      return new Response('{}');
    }) as typeof fetch;
    const aborted = await caught(newClient(aborting).createPaymentIntent({ token: 't' }, { signal: controller.signal }));
    expect(aborted).not.toBeInstanceOf(client.CheckoutClientError);
    expect((aborted as Error).name).toBe('AbortError');
  });
});

describe('a busy shop (503 SHOP_BUSY)', () => {
  /** STORE_MAX_CONCURRENCY=1 and its one slot held by a checkout in flight, as in a flash sale. */
  async function busyStore() {
    useTestEnv({ STORE_MAX_CONCURRENCY: '1' });
    providers.woo.seed({ id: 399 });
    const hold = providers.holdStore('GET', /\/orders\/399$/);
    const inFlight = submitOrderPOST(postJson('/api/submit-order', { token: await tokenFor(399), billing_address: billing }));
    await hold.reached;
    return async () => {
      hold.release();
      await inFlight;
    };
  }

  /**
   * The client's wait before its retry runs on fake time: after the first (busy) answer the
   * timers are faked and advanced in steps until the client sends again; each send runs the
   * route handlers on real timers. `beforeRetry` runs between the two sends.
   */
  async function withFakeWait<T>(call: (fetchImpl: typeof fetch) => Promise<T>, beforeRetry: () => Promise<void> = async () => undefined) {
    const service = serviceFetch();
    let sends = 0;
    let busyAnswered!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (busyAnswered = resolve));
    const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
      sends += 1;
      if (sends > 1) {
        vi.useRealTimers();
        await beforeRetry();
        return service.fetch(input, init);
      }
      const response = await service.fetch(input, init);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      busyAnswered();
      return response;
    }) as typeof fetch;
    const settled = call(fetchImpl).then(
      (value) => ({ value, error: undefined }),
      (error: unknown) => ({ value: undefined, error }),
    );
    let waitedMs = 0;
    await Promise.race([firstAnswer, settled]);
    try {
      while (sends < 2 && waitedMs < 10_000) {
        waitedMs += 250;
        await vi.advanceTimersByTimeAsync(250);
      }
    } finally {
      vi.useRealTimers();
    }
    return { ...(await settled), sends, waitedMs, responses: service.responses };
  }

  it('is sent again once after the wait the service asked for, and the retry’s answer is the result', async () => {
    const release = await busyStore();
    providers.woo.seed({ id: 398, lines: [{ total: '20.00' }] });
    const token = await tokenFor(398);
    const outcome = await withFakeWait((fetchImpl) => newClient(fetchImpl).createPaymentIntent({ token }), release);
    expect(outcome.sends).toBe(2);
    const asked = Number(outcome.responses[0]!.headers.get('retry-after'));
    expect(outcome.responses[0]!.status).toBe(503);
    expect(outcome.waitedMs).toBeGreaterThanOrEqual(asked * 1000);
    expect(outcome).toMatchObject({ value: { success: true, payment_intent_id: expect.stringMatching(/^pi_/) } });
  });

  it('still busy after the retry: ShopBusy with the message to show and the wait asked for', async () => {
    const release = await busyStore();
    providers.woo.seed({ id: 397 });
    const token = await tokenFor(397);
    const outcome = await withFakeWait((fetchImpl) => newClient(fetchImpl).submitOrder({ token, billing_address: billing }));
    await release();
    expect(outcome.sends).toBe(2);
    expect(outcome.error).toBeInstanceOf(client.ShopBusy);
    expect(outcome.error).toMatchObject({ status: 503, message: 'The shop is busy, try again in a few seconds' });
    const { retryAfterSeconds } = outcome.error as ClientModule.ShopBusy;
    expect(retryAfterSeconds).toBe(Number(outcome.responses[1]!.headers.get('retry-after')));
    // A browser storefront reads Retry-After across origins only with this grant.
    const exposed = outcome.responses[1]!.headers.get('access-control-expose-headers')!.toLowerCase();
    expect(exposed.split(/\s*,\s*/)).toContain('retry-after');
  });

  it('with retryWhenBusy: false, ShopBusy comes at once', async () => {
    const release = await busyStore();
    providers.woo.seed({ id: 396 });
    const service = serviceFetch();
    const checkout = client.createCheckoutClient({ baseUrl: 'https://checkout.test', fetch: service.fetch, retryWhenBusy: false });
    const error = await caught(checkout.createPaymentIntent({ token: await tokenFor(396) }));
    await release();
    expect(error).toBeInstanceOf(client.ShopBusy);
    expect(service.responses).toHaveLength(1);
  });
});
