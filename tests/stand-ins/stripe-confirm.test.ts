/**
 * The Stripe stand-in's browser side and its webhooks, over HTTP on loopback:
 * confirming a payment intent as Stripe.js does (publishable key and client
 * secret in a form body, a test payment method), and the signed event Stripe
 * then posts to the shop by itself, retried a bounded number of times when the
 * endpoint does not answer 2xx. The last test lets the service's real card
 * webhook route receive the delivery and checks the order in the WooCommerce
 * stand-in.
 */
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { listen, serveFetch, type RunningServer } from '@/stand-ins/loopback-http';
import { StripeModel } from '@/stand-ins/stripe/model';
import { startStripeStandIn, type StripeStandIn } from '@/stand-ins/stripe/loopback-server';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import { startWooCommerceStandIn, type WooStandIn } from '@/stand-ins/woocommerce/loopback-server';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';

const SECRET_KEY = 'sk_test_confirm_contract';
const PUBLISHABLE_KEY = 'pk_test_confirm_contract';
const RETRY_DELAYS_MS = [50, 100, 150];

let stripe: StripeStandIn;
let receiver: RunningServer | undefined;

beforeAll(async () => {
  stripe = await startStripeStandIn({
    model: new StripeModel(),
    secretKey: SECRET_KEY,
    publishableKey: PUBLISHABLE_KEY,
    webhookRetryDelaysMs: RETRY_DELAYS_MS,
  });
});

afterAll(async () => {
  await stripe?.close();
});

afterEach(async () => {
  await stripe.webhooksIdle();
  await receiver?.close();
  receiver = undefined;
});

const newIntent = (amount = '4500', orderId = '1') =>
  stripe.model.create({ amount, currency: 'usd', metadata: { shop_order_id: orderId } });

/** POST …/confirm exactly as Stripe.js's confirmCardPayment sends it from a storefront page. */
async function confirmFromBrowser(intent: { id: string; client_secret: string }, paymentMethod: string, overrides: Record<string, string> = {}) {
  const response = await fetch(`${stripe.url}/v1/payment_intents/${intent.id}/confirm`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'http://127.0.0.1:3001' },
    body: new URLSearchParams({
      payment_method: paymentMethod,
      expected_payment_method_type: 'card',
      use_stripe_sdk: 'true',
      key: PUBLISHABLE_KEY,
      client_secret: intent.client_secret,
      ...overrides,
    }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

interface Received {
  event: Stripe.Event;
  userAgent: string | null;
}

/** A webhook endpoint that verifies each delivery with the real SDK, answering the given statuses in turn (then 200). */
async function startReceiver(statuses: number[] = []): Promise<{ received: Received[]; url: string }> {
  const received: Received[] = [];
  const verifier = new Stripe('sk_test_unused');
  receiver = await listen(
    serveFetch(async (request) => {
      const payload = await request.text();
      const event = verifier.webhooks.constructEvent(payload, request.headers.get('stripe-signature') ?? '', TEST_WEBHOOK_SECRET);
      received.push({ event, userAgent: request.headers.get('user-agent') });
      const status = statuses.shift() ?? 200;
      return new Response(JSON.stringify(status === 200 ? { received: true } : { error: 'down' }), { status });
    }),
  );
  stripe.deliverEventsTo({ url: `${receiver.url}/api/stripe/webhook`, secret: TEST_WEBHOOK_SECRET });
  return { received, url: receiver.url };
}

describe('confirming a payment intent from the browser, as Stripe.js does', () => {
  it('a test card that succeeds: 200 with the succeeded intent, readable from any origin', async () => {
    const intent = newIntent();
    const answer = await confirmFromBrowser(intent, 'pm_card_visa');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.body).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 4500, payment_method: 'pm_card_visa', last_payment_error: null });
    expect(answer.body.latest_charge).toMatch(/^ch_/);
  });

  it('a declined test card: 402 card_error carrying the intent, left in requires_payment_method', async () => {
    const intent = newIntent();
    const answer = await confirmFromBrowser(intent, 'pm_card_chargeDeclined');
    expect(answer.status).toBe(402);
    expect(answer.body.error).toMatchObject({
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
      payment_intent: { id: intent.id, status: 'requires_payment_method', last_payment_error: { code: 'card_declined', type: 'card_error' } },
    });
    // The customer tries another card: the same intent can still be paid.
    expect((await confirmFromBrowser(intent, 'pm_card_visa')).body.status).toBe('succeeded');
  });

  it('refuses a wrong client secret, an unknown payment method, a paid intent and a wrong publishable key', async () => {
    const intent = newIntent();
    const wrongSecret = await confirmFromBrowser(intent, 'pm_card_visa', { client_secret: `${intent.id}_secret_nope` });
    expect(wrongSecret.status).toBe(400);
    expect(wrongSecret.body.error).toMatchObject({ code: 'payment_intent_invalid_parameter', param: 'client_secret' });
    const unknownMethod = await confirmFromBrowser(intent, 'pm_card_nope');
    expect(unknownMethod.body.error).toMatchObject({ code: 'resource_missing', param: 'payment_method' });
    expect(stripe.model.retrieve(intent.id).status).toBe('requires_payment_method');

    await confirmFromBrowser(intent, 'pm_card_visa');
    const again = await confirmFromBrowser(intent, 'pm_card_visa');
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 'payment_intent_unexpected_state' });

    const wrongKey = await confirmFromBrowser(newIntent(), 'pm_card_visa', { key: 'pk_test_someone_else' });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.error).toMatchObject({ code: 'api_key_invalid' });
  });

  it('a publishable key may only confirm or read an intent, never create one', async () => {
    const response = await fetch(`${stripe.url}/v1/payment_intents`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ amount: '100', currency: 'usd', key: PUBLISHABLE_KEY }),
    });
    expect(response.status).toBe(401);
    expect(stripe.model.intents.size).toBeGreaterThan(0);
    const intent = newIntent();
    const read = await fetch(`${stripe.url}/v1/payment_intents/${intent.id}?key=${PUBLISHABLE_KEY}&client_secret=${intent.client_secret}`);
    expect(await read.json()).toMatchObject({ id: intent.id, status: 'requires_payment_method' });
  });

  it('the secret key confirms without a client secret, as a server would', async () => {
    const intent = newIntent();
    const response = await fetch(`${stripe.url}/v1/payment_intents/${intent.id}/confirm`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'payment_method=pm_card_visa',
    });
    expect(await response.json()).toMatchObject({ status: 'succeeded' });
  });
});

describe('the webhook Stripe sends by itself after a confirmation', () => {
  it('posts payment_intent.succeeded, signed with the endpoint secret, with Stripe’s event shape', async () => {
    const { received } = await startReceiver();
    const intent = newIntent('4500', '77');
    await confirmFromBrowser(intent, 'pm_card_visa');
    await stripe.webhooksIdle();
    expect(received).toHaveLength(1);
    const [{ event, userAgent }] = received as [Received];
    expect(userAgent).toMatch(/^Stripe\//);
    expect(event).toMatchObject({ object: 'event', type: 'payment_intent.succeeded', livemode: false });
    expect(event.id).toMatch(/^evt_/);
    expect(event.data.object).toMatchObject({ id: intent.id, status: 'succeeded', amount: 4500, metadata: { shop_order_id: '77' } });
  });

  it('manual capture: posts payment_intent.amount_capturable_updated on confirmation, then payment_intent.succeeded on capture', async () => {
    const { received } = await startReceiver();
    const intent = stripe.model.create({ amount: '4500', currency: 'usd', capture_method: 'manual', metadata: { shop_order_id: '78' } });
    await confirmFromBrowser(intent, 'pm_card_visa');
    await stripe.webhooksIdle();
    const captured = await fetch(`${stripe.url}/v1/payment_intents/${intent.id}/capture`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ amount_to_capture: '4000' }),
    });
    expect(captured.status).toBe(200);
    await stripe.webhooksIdle();
    expect(received.map((r) => r.event.type)).toEqual(['payment_intent.amount_capturable_updated', 'payment_intent.succeeded']);
    expect(received[0]!.event.data.object).toMatchObject({ status: 'requires_capture', amount_capturable: 4500 });
    expect(received[1]!.event.data.object).toMatchObject({ status: 'succeeded', amount_received: 4000 });
  });

  it('posts payment_intent.payment_failed with the decline in last_payment_error', async () => {
    const { received } = await startReceiver();
    await confirmFromBrowser(newIntent(), 'pm_card_chargeDeclined');
    await stripe.webhooksIdle();
    expect(received.map((r) => r.event.type)).toEqual(['payment_intent.payment_failed']);
    expect(received[0]?.event.data.object).toMatchObject({ last_payment_error: { message: 'Your card was declined.', decline_code: 'generic_decline' } });
  });

  it('retries a delivery that does not get a 2xx, with the same event id, until one does', async () => {
    const { received } = await startReceiver([500, 503]);
    await confirmFromBrowser(newIntent(), 'pm_card_visa');
    await stripe.webhooksIdle();
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.event.id)).size).toBe(1);
    const eventId = received[0]?.event.id;
    expect(stripe.webhookAttempts.filter((a) => a.eventId === eventId).map((a) => a.status)).toEqual([500, 503, 200]);
  });

  it('gives up after a bounded number of retries', async () => {
    const { received } = await startReceiver([500, 500, 500, 500, 500, 500]);
    await confirmFromBrowser(newIntent(), 'pm_card_visa');
    await stripe.webhooksIdle();
    expect(received).toHaveLength(1 + RETRY_DELAYS_MS.length);
  });

  it('sends nothing for the demo controls: npm run demo:pay delivers its own event', async () => {
    const { received } = await startReceiver();
    const intent = newIntent();
    await fetch(`${stripe.url}/demo/payment_intents/${intent.id}/succeed`, { method: 'POST' });
    await stripe.webhooksIdle();
    expect(received).toHaveLength(0);
  });
});

describe('the delivery received by the service’s card webhook route', () => {
  let woo: WooStandIn;

  beforeAll(async () => {
    woo = await startWooCommerceStandIn({
      model: new WooCommerceModel({ customStatuses: ['shipped'] }),
      credentials: { consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET },
    });
  });

  afterAll(async () => {
    await woo?.close();
  });

  it('a confirmed card turns the order processing; a declined one leaves it pending with the note', async () => {
    useTestEnv({ WOOCOMMERCE_URL: woo.url, STRIPE_API_BASE_URL: stripe.url });
    receiver = await listen(serveFetch((request) => cardWebhook(request)));
    stripe.deliverEventsTo({ url: `${receiver.url}/api/stripe/webhook`, secret: TEST_WEBHOOK_SECRET });
    woo.model.seed({ id: 8101, lines: [{ total: '45.00' }] });
    woo.model.seed({ id: 8102, lines: [{ total: '12.00' }] });

    await confirmFromBrowser(newIntent('4500', '8101'), 'pm_card_visa');
    await confirmFromBrowser(newIntent('1200', '8102'), 'pm_card_chargeDeclined');
    await stripe.webhooksIdle();

    expect(woo.model.get(8101)).toMatchObject({ status: 'processing', payment_method: 'cardprovider' });
    const declined = woo.model.get(8102);
    expect(declined.status).toBe('pending');
    expect(declined.customer_note).toContain('Your card was declined.');
    expect(stripe.webhookAttempts.slice(-2).map((a) => a.status)).toEqual([200, 200]);
  });
});
