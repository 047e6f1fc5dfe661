/**
 * The store and card clients at their boundary: every call has the upstream
 * timeout, failures become typed errors with identifiers only, and the Stripe
 * SDK goes wherever STRIPE_API_BASE_URL points.
 */
import { delay, http, HttpResponse } from 'msw';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/payment-intent/route';
import { StoreError } from '@/lib/errors';
import { getServices } from '@/lib/services';
import { TEST_STORE_URL, useTestEnv } from '../support/env';
import { createProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const { providers, server } = createProviders();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

beforeEach(() => {
  useTestEnv({ UPSTREAM_TIMEOUT_MS: '300', NODE_ENV: 'development' });
  providers.reset();
});

describe('upstream timeouts', () => {
  it('gives up on a store that does not answer within UPSTREAM_TIMEOUT_MS', async () => {
    server.use(
      http.get(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, async () => {
        await delay(10_000);
        return HttpResponse.json({});
      }),
    );
    const started = Date.now();
    const response = await POST(postJson('/api/payment-intent', { token: await tokenFor(801) }));
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(response.status).toBe(500);
    expect((await response.json()).error).toEqual({
      code: 'PAYMENT_INTENT_ERROR',
      message: 'Store request failed: get order',
      details: { operation: 'get order', failure: 'timeout', status: null, code: null },
    });
  });

  it('gives up on a card provider that does not answer, and writes nothing to the order', async () => {
    providers.woo.seed({ id: 802 });
    server.use(
      http.post('https://api.stripe.com/v1/payment_intents', async () => {
        await delay(10_000);
        return HttpResponse.json({});
      }),
    );
    const started = Date.now();
    const response = await POST(postJson('/api/payment-intent', { token: await tokenFor(802) }));
    // One retry is allowed (idempotent with its key): two timeouts at most.
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(response.status).toBe(500);
    expect((await response.json()).error.message).toBe('Payment provider request failed: create payment intent');
    expect(providers.orderUpdates()).toHaveLength(0);
  });
});

describe('store errors', () => {
  it('turns upstream errors into StoreError with status and code only, never the body or the keys', async () => {
    server.use(
      http.get(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, () =>
        HttpResponse.json(
          { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot view this resource. SECRET-BODY-TEXT', data: { status: 401 } },
          { status: 401 },
        ),
      ),
    );
    const error = await getServices()
      .store()
      .getOrder(5)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ failure: 'rejected', status: 401, code: 'woocommerce_rest_cannot_view' });
    expect(JSON.stringify(error)).not.toMatch(/SECRET-BODY-TEXT|ck_test|cs_test/);
    expect(String((error as Error).message)).toBe('Store request failed: get order');
  });

  it('treats an answer that is not an order as a bad response', async () => {
    server.use(http.get(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, () => HttpResponse.text('<html>maintenance</html>')));
    await expect(getServices().store().getOrder(5)).rejects.toMatchObject({ failure: 'bad_response' });
  });

  it('logs no upstream body for a failing checkout', async () => {
    server.use(
      http.get(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, () =>
        HttpResponse.json({ code: 'internal_error', message: 'SQL SECRET-BODY-TEXT' }, { status: 500 }),
      ),
    );
    await POST(postJson('/api/payment-intent', { token: await tokenFor(803) }));
    expect(JSON.stringify(loggedLines())).not.toContain('SECRET-BODY-TEXT');
  });
});

describe('STRIPE_API_BASE_URL', () => {
  it('points the Stripe SDK at the configured protocol, host and port', async () => {
    useTestEnv({ STRIPE_API_BASE_URL: 'http://127.0.0.1:12111' });
    providers.woo.seed({ id: 804, lines: [{ total: '9.99' }] });
    const seen: { url: string; body: string }[] = [];
    server.use(
      http.post('http://127.0.0.1:12111/v1/payment_intents', async ({ request }) => {
        seen.push({ url: request.url, body: await request.text() });
        return HttpResponse.json({
          id: 'pi_local_1',
          object: 'payment_intent',
          amount: 999,
          currency: 'usd',
          status: 'requires_payment_method',
          client_secret: 'pi_local_1_secret_x',
          metadata: { shop_order_id: '804' },
        });
      }),
    );
    const response = await POST(postJson('/api/payment-intent', { token: await tokenFor(804) }));
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(new URLSearchParams(seen[0]!.body).get('amount')).toBe('999');
    expect(providers.callsTo('card')).toHaveLength(0);
    expect(providers.woo.get(804).meta_data.find((m) => m.key === '_payment_intent_id')?.value).toBe('pi_local_1');
  });
});

describe('malformed store amounts', () => {
  it('treats an order whose amounts are not decimals as a bad store response, and charges nothing', async () => {
    server.use(
      http.get(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, () =>
        HttpResponse.json({ id: 805, status: 'pending', currency: 'USD', total: 'N/A', line_items: [{ total: '1,50' }] }),
      ),
    );
    const response = await POST(postJson('/api/payment-intent', { token: await tokenFor(805) }));
    expect(response.status).toBe(500);
    expect((await response.json()).error).toMatchObject({
      message: 'Store request failed: get order',
      details: { failure: 'bad_response' },
    });
    expect(providers.callsTo('card')).toHaveLength(0);
  });

  it('reads an empty amount as zero', async () => {
    server.use(
      http.get(`${TEST_STORE_URL}/wp-json/wc/v3/orders/:id`, () =>
        HttpResponse.json({ id: 806, status: 'pending', currency: 'USD', total: '5.00', shipping_total: '', total_tax: '', line_items: [{ total: '5.00' }] }),
      ),
    );
    const order = await getServices().store().getOrder(806);
    expect(order.shipping_total).toBe('0');
  });
});
