/**
 * What only the HTTP stand-ins do: WooCommerce's OAuth 1.0a checks, the
 * read-only demo views and the demo payment controls, and Stripe-shaped
 * answers to requests the SDK never makes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StripeModel } from '@/stand-ins/stripe/model';
import { startStripeStandIn, type StripeStandIn } from '@/stand-ins/stripe/loopback-server';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import { oauthSignature } from '@/stand-ins/woocommerce/fetch-handler';
import { startWooCommerceStandIn, type WooStandIn } from '@/stand-ins/woocommerce/loopback-server';
import { createDemoWooCommerce, DEMO_ORDERS } from '@/stand-ins/demo/world';

const KEY = 'ck_servers_test';
const SECRET = 'cs_servers_test';
let woo: WooStandIn;
let stripe: StripeStandIn;

beforeAll(async () => {
  woo = await startWooCommerceStandIn({ model: new WooCommerceModel(), credentials: { consumerKey: KEY, consumerSecret: SECRET } });
  stripe = await startStripeStandIn({ model: new StripeModel(), secretKey: 'sk_test_servers' });
  woo.model.seed({ id: 1, lines: [{ total: '10.00' }] });
});

afterAll(async () => {
  await Promise.all([woo?.close(), stripe?.close()]);
});

function signedUrl(method: string, path: string, overrides: Record<string, string> = {}): string {
  const base = `${woo.url}${path}`;
  const params: Record<string, string> = {
    oauth_consumer_key: KEY,
    oauth_nonce: Math.random().toString(36).slice(2),
    oauth_signature_method: 'HMAC-SHA256',
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
  };
  params.oauth_signature = oauthSignature(method, base, Object.entries(params), SECRET);
  return `${base}?${new URLSearchParams({ ...params, ...overrides })}`;
}

describe('WooCommerce stand-in authentication', () => {
  it('accepts a correctly signed OAuth 1.0a request once, and refuses its replay', async () => {
    const url = signedUrl('GET', '/wp-json/wc/v3/orders/1');
    expect((await fetch(url)).status).toBe(200);
    const replay = await fetch(url);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ code: 'woocommerce_rest_authentication_error', data: { status: 401 } });
  });

  it('refuses a tampered signature, a stale timestamp and a missing authentication', async () => {
    expect((await fetch(signedUrl('GET', '/wp-json/wc/v3/orders/1', { oauth_signature: 'AAAA' }))).status).toBe(401);
    expect((await fetch(signedUrl('GET', '/wp-json/wc/v3/orders/1', { oauth_timestamp: '1000000000' }))).status).toBe(401);
    const anonymous = await fetch(`${woo.url}/wp-json/wc/v3/orders/1`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'woocommerce_rest_cannot_view' });
  });

  it('accepts HTTP Basic with the consumer key and secret', async () => {
    const response = await fetch(`${woo.url}/wp-json/wc/v3/orders/1`, {
      headers: { Authorization: `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 1, status: 'pending', total: '10.00' });
  });

  it('answers an unknown route with rest_no_route and a malformed body with rest_invalid_json', async () => {
    expect(await (await fetch(`${woo.url}/wp-json/wc/v3/nothing`)).json()).toMatchObject({ code: 'rest_no_route' });
    const bad = await fetch(signedUrl('PUT', '/wp-json/wc/v3/orders/1'), { method: 'PUT', body: '{nope', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'rest_invalid_json' });
  });
});

describe('demo views and controls', () => {
  it('shows an order read-only without credentials, and refuses writes there', async () => {
    const response = await fetch(`${woo.url}/demo/orders/1`);
    expect(await response.json()).toMatchObject({ id: 1, status: 'pending', meta: {} });
    expect((await fetch(`${woo.url}/demo/orders/1`, { method: 'PUT', body: '{}' })).status).toBe(404);
    expect((await fetch(`${woo.url}/demo/orders/404404`)).status).toBe(404);
  });

  it('shows the items and a history of the writes: status changes, customer notes and the meta entries written', async () => {
    woo.model.seed({ id: 2, lines: [{ name: 'Tea', quantity: 2, total: '8.00' }], meta_data: [{ key: '_payment_intent_id', value: 'pi_1' }] });
    const write = (body: unknown) =>
      fetch(`${woo.url}/wp-json/wc/v3/orders/2`, {
        method: 'PUT',
        headers: { Authorization: `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    // As the card webhook appends: the entries the order holds come back unchanged beside the new ones.
    await write({ status: 'processing', customer_note: 'Paid.', meta_data: [{ key: '_payment_intent_id', value: 'pi_1' }, { key: '_paid_date', value: '2026-01-01T00:00:00Z' }] });
    await write({ status: 'no-such-status' });
    await write({ meta_data: [{ key: '_payment_intent_id', value: 'pi_1' }] });
    const view = await (await fetch(`${woo.url}/demo/orders/2`)).json();
    expect(view.items).toEqual([{ name: 'Tea', quantity: 2, total: '8.00' }]);
    expect(view.history).toHaveLength(1);
    expect(view.history[0]).toMatchObject({
      status: { from: 'pending', to: 'processing' },
      customer_note: 'Paid.',
      meta: [{ key: '_paid_date', value: '2026-01-01T00:00:00Z' }],
    });
  });

  it('shows refunds and notes in the history, with the status a last refund brings', async () => {
    woo.model.seed({ id: 3, status: 'processing', lines: [{ total: '10.00' }] });
    const auth = { Authorization: `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`, 'Content-Type': 'application/json' };
    const post = (path: string, body: unknown) => fetch(`${woo.url}/wp-json/wc/v3/orders/3/${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    const refund = { api_refund: false, reason: 'Stripe refund re_1', meta_data: [{ key: '_provider_refund_id', value: 're_1' }] };
    expect((await post('refunds', { ...refund, amount: '4.00' })).status).toBe(201);
    expect((await post('notes', { note: 'Refunded 4.00 in Stripe.' })).status).toBe(201);
    expect((await post('refunds', { ...refund, amount: '99.00' })).status).toBe(500);
    expect((await post('refunds', { ...refund, amount: '6.00' })).status).toBe(201);
    const view = await (await fetch(`${woo.url}/demo/orders/3`)).json();
    expect(view.status).toBe('refunded');
    expect(view.history).toMatchObject([
      { refund: { amount: '4.00', reason: 'Stripe refund re_1' }, meta: [] },
      { note: { note: 'Refunded 4.00 in Stripe.', customer_note: false } },
      { refund: { amount: '6.00' }, status: { from: 'processing', to: 'refunded' } },
    ]);
    expect(view.history[0].status).toBeUndefined();
    const removed = await fetch(`${woo.url}/wp-json/wc/v3/orders/3/refunds/${view.history[2].refund.id}?force=true`, { method: 'DELETE', headers: auth });
    expect(removed.status).toBe(200);
    expect((await (await fetch(`${woo.url}/demo/orders/3`)).json()).history[3]).toMatchObject({ refund_removed: { amount: '6.00' } });
  });

  it('seeds the demo orders the README lists', () => {
    const model = createDemoWooCommerce();
    expect([...model.orders.keys()]).toEqual(DEMO_ORDERS.map((o) => o.id));
    expect(model.get(1003)).toMatchObject({ currency: 'JPY', total: '4000' });
    expect(model.get(1004).status).toBe('processing');
    // The e-book order needs no processing: WooCommerce alone would stamp its paid date only at `completed`.
    expect(model.needsProcessing(model.get(1006))).toBe(false);
    expect(model.needsProcessing(model.get(1001))).toBe(true);
    expect(model.registeredStatuses).toContain('shipped');
    expect(model.registeredStatuses).not.toContain('awaiting_shipment');
  });

  it('completes or declines a payment intent like a customer’s card would', async () => {
    const intent = stripe.model.create({ amount: '1000', currency: 'usd' });
    const failed = await (await fetch(`${stripe.url}/demo/payment_intents/${intent.id}/fail`, { method: 'POST', body: '{"message":"Insufficient funds."}' })).json();
    expect(failed).toMatchObject({ status: 'requires_payment_method', last_payment_error: { message: 'Insufficient funds.' } });
    const paid = await (await fetch(`${stripe.url}/demo/payment_intents/${intent.id}/succeed`, { method: 'POST' })).json();
    expect(paid).toMatchObject({ status: 'succeeded', amount_received: 1000, last_payment_error: null });
    expect(paid.latest_charge).toMatch(/^ch_/);
  });
});

describe('Stripe stand-in answers', () => {
  const auth = { Authorization: 'Bearer sk_test_servers', 'Content-Type': 'application/x-www-form-urlencoded' };

  it('reads form-encoded parameters, including nested metadata', async () => {
    const response = await fetch(`${stripe.url}/v1/payment_intents`, {
      method: 'POST',
      headers: auth,
      body: 'amount=2500&currency=eur&metadata[shop_order_id]=77',
    });
    expect(await response.json()).toMatchObject({ amount: 2500, currency: 'eur', metadata: { shop_order_id: '77' } });
  });

  it('answers Stripe-shaped errors: missing key, missing parameter, unknown route', async () => {
    const noKey = await fetch(`${stripe.url}/v1/payment_intents`, { method: 'POST', body: 'amount=1' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const missing = await fetch(`${stripe.url}/v1/payment_intents`, { method: 'POST', headers: auth, body: 'amount=100' });
    expect(await missing.json()).toMatchObject({ error: { code: 'parameter_missing', param: 'currency' } });
    const unknown = await fetch(`${stripe.url}/v1/customers`, { headers: auth });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});
