/**
 * The payment model through the webhook: events delivered out of
 * order, again after the memory of applied events is gone, and holds that overlap.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GET as reconcileGET } from '@/app/api/cron/reconcile-payments/route';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { POST as shippingPOST } from '@/app/api/shipping/webhook/route';
import { POST as submitOrderPOST } from '@/app/api/submit-order/route';
import { resetServices } from '@/lib/services';
import { deliverEvent, paidOrder } from '../support/card-events';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import { postJson, tokenFor } from '../support/requests';
import { callStore, TEST_STORE_CALLBACK_SECRET } from '../support/store-callbacks';
import { useShippingProviders } from '../support/shipstation';

const ctx = useShippingProviders();
const providers = () => ctx.providers;
const woo = () => ctx.providers.woo;
const stripe = () => ctx.providers.stripe;
const lastEvent = (type: string) => stripe().events.events.filter((e) => e.type === type).at(-1)!;
const captureCalls = () => providers().callsTo('card', 'POST', /\/capture$/);
const facts = (orderId: number) => JSON.parse(String(woo().get(orderId).meta_data.find((m) => m.key === '_cardprovider_payment')?.value));

function ship(orderId: number) {
  return shippingPOST(postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: String(orderId), tracking_number: `TRK${orderId}`, carrier: 'UPS' }, { origin: null }));
}

/** A pending order of 30.00 checked out through the service, its card authorized at Stripe; nothing delivered yet. */
async function authorizedAtStripe(orderId: number): Promise<string> {
  woo().seed({ id: orderId, lines: [{ total: '30.00' }] });
  const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
  expect(response.status).toBe(200);
  const intentId = ((await response.json()) as { payment_intent_id: string }).payment_intent_id;
  stripe().authorize(intentId);
  return intentId;
}

describe('a review opened before its authorization is recorded', () => {
  beforeEach(() => useTestEnv({ STRIPE_CAPTURE: 'on_shipment', CARD_LIFECYCLE_EVENTS: 'reviews,disputes' }));

  it('is recorded at once, in either order, and no shipment captures the flagged payment until it is approved', async () => {
    for (const [orderId, reviewFirst] of [[4201, true], [4202, false]] as const) {
      const intentId = await authorizedAtStripe(orderId);
      const authorization = lastEvent('payment_intent.amount_capturable_updated');
      const { review, event: opened } = stripe().openReview(intentId);
      const deliveries = reviewFirst ? [opened, authorization] : [authorization, opened];
      for (const event of deliveries) expect((await deliverEvent(event)).status).toBe(200);
      expect(woo().get(orderId).status).toBe('on-hold');

      expect((await ship(orderId)).status).toBe(200);
      expect(captureCalls()).toHaveLength(0);
      expect(woo().get(orderId).status).toBe('on-hold');

      expect((await deliverEvent(stripe().closeReview(review.id, 'approved'))).status).toBe(200);
      expect((await ship(orderId)).status).toBe(200);
      expect(captureCalls()).toHaveLength(1);
      providers().reset();
    }
  });

  it('a dispute of the payment captured at shipping, before its success is recorded, is the order\'s dispute', async () => {
    const intentId = await authorizedAtStripe(4203);
    expect((await deliverEvent(lastEvent('payment_intent.amount_capturable_updated'))).status).toBe(200);
    expect((await ship(4203)).status).toBe(200);
    expect(captureCalls()).toHaveLength(1);
    const succeeded = lastEvent('payment_intent.succeeded');

    const { dispute, event } = stripe().dispute(intentId);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(woo().get(4203).status).toBe('on-hold');
    expect(facts(4203).disputes).toEqual({ [dispute.id]: expect.objectContaining({ status: 'needs_response' }) });

    expect((await deliverEvent(succeeded)).status).toBe(200);
    expect((await deliverEvent(stripe().closeDispute(dispute.id, 'won'))).status).toBe(200);
    // Back where the dispute found it: shipped (or completed where the store lacks `shipped`).
    expect(['shipped', 'completed']).toContain(woo().get(4203).status);
    expect(woo().get(4203).transaction_id).toMatch(/^ch_/);
  });
});

describe('failures on one order, however many, apply once', () => {
  beforeEach(() => useTestEnv({}));

  it('after 105 declines and a flush of the memory of applied events, the oldest redelivered changes nothing', async () => {
    woo().seed({ id: 4301, customer_id: 0, lines: [{ total: '30.00' }] });
    const intent = stripe().create({ amount: '3000', currency: 'usd', metadata: { shop_order_id: '4301' } });
    const failures = [];
    for (let i = 0; i < 105; i++) {
      stripe().fail(intent.id, `Declined ${i}.`);
      const event = lastEvent('payment_intent.payment_failed');
      event.created = 1_790_000_000 + i;
      failures.push(event);
      expect((await deliverEvent(event)).status).toBe(200);
    }
    const writes = providers().orderUpdates(4301).length;
    expect(woo().get(4301).customer_note).toContain('Declined 104.');

    resetServices();
    useTestEnv({});
    expect((await deliverEvent(failures[0]!)).status).toBe(200);
    expect((await deliverEvent(failures[104]!)).status).toBe(200);
    expect(providers().orderUpdates(4301)).toHaveLength(writes);
    expect(woo().get(4301).customer_note).toContain('Declined 104.');
  });

  it('an order whose facts cannot be read moves no money: the admin\'s capture is refused', async () => {
    useTestEnv({ STRIPE_CAPTURE: 'manual', STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET });
    await authorizedAtStripe(4303);
    expect((await deliverEvent(lastEvent('payment_intent.amount_capturable_updated'))).status).toBe(200);
    woo().update(4303, { meta_data: woo().get(4303).meta_data.map((m) => (m.key === '_cardprovider_payment' ? { ...m, value: '{"reviews":{"x":null},"disputes":{}}' } : m)) });

    const refused = await callStore('capture', { order_id: 4303 });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('cannot be read');
    expect(captureCalls()).toHaveLength(0);
  });

  it('an unreadable facts value is rebuilt from what the order shows, never read as "nothing applied"', async () => {
    woo().seed({ id: 4302, lines: [{ total: '30.00' }] });
    const intent = stripe().create({ amount: '3000', currency: 'usd', metadata: { shop_order_id: '4302' } });
    stripe().fail(intent.id);
    const failed = lastEvent('payment_intent.payment_failed');
    expect((await deliverEvent(failed)).status).toBe(200);
    // Another plugin, or an admin, garbles the value.
    woo().update(4302, { meta_data: woo().get(4302).meta_data.map((m) => (m.key === '_cardprovider_payment' ? { ...m, value: '{"oops' } : m)) });
    const writes = providers().orderUpdates(4302).length;

    resetServices();
    useTestEnv({});
    expect((await deliverEvent(failed)).status).toBe(200);
    expect(providers().orderUpdates(4302)).toHaveLength(writes);
  });
});

describe('an old failure after a newer delayed payment', () => {
  beforeEach(() => useTestEnv({ CARD_LIFECYCLE_EVENTS: 'async', ALLOWED_ORIGINS: 'https://shop.example' }));

  it('leaves the on-hold order on hold, and submit-order refuses it', async () => {
    woo().seed({ id: 4401, currency: 'EUR', lines: [{ total: '30.00' }] });
    const intent = stripe().create({ amount: '3000', currency: 'eur', metadata: { shop_order_id: '4401' } });
    stripe().fail(intent.id);
    const declined = lastEvent('payment_intent.payment_failed');
    declined.created -= 120;
    stripe().process(intent.id);
    const processing = lastEvent('payment_intent.processing');

    expect((await deliverEvent(processing)).status).toBe(200);
    expect((await deliverEvent(declined)).status).toBe(200);
    expect(woo().get(4401).status).toBe('on-hold');

    // The same failure delivered first, then the debit: the same end.
    resetServices();
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'async', ALLOWED_ORIGINS: 'https://shop.example' });
    expect((await deliverEvent(declined)).status).toBe(200);
    expect(woo().get(4401).status).toBe('on-hold');

    const submitted = await submitOrderPOST(
      postJson('/api/submit-order', { token: await tokenFor(4401), billing_address: { first_name: 'Ada', country: 'DE' } }, { origin: 'https://shop.example' }),
    );
    expect(submitted.status).toBe(400);
  });

  it('a failure older than the debit, whose snapshot cannot be placed, is checked against the intent as Stripe has it now', async () => {
    woo().seed({ id: 4402, currency: 'EUR', lines: [{ total: '30.00' }] });
    const intent = stripe().create({ amount: '3000', currency: 'eur', metadata: { shop_order_id: '4402' } });
    stripe().process(intent.id);
    expect((await deliverEvent(lastEvent('payment_intent.processing'))).status).toBe(200);
    // A failure event stamped the same second as the debit (its order cannot be told from the clock).
    stripe().fail(intent.id);
    const failed = lastEvent('payment_intent.payment_failed');
    failed.created = facts(4402).attempt.at;
    stripe().setStatus(intent.id, 'processing');

    expect((await deliverEvent(failed)).status).toBe(200);
    expect(woo().get(4402).status).toBe('on-hold');
  });
});

describe('a debit on its way when the shop moves the order on by hand', () => {
  beforeEach(() => useTestEnv({ CARD_LIFECYCLE_EVENTS: 'async' }));

  async function debitOnItsWay(orderId: number) {
    woo().seed({ id: orderId, currency: 'EUR', lines: [{ total: '30.00' }] });
    const intent = stripe().create({ amount: '3000', currency: 'eur', metadata: { shop_order_id: String(orderId) } });
    stripe().process(intent.id);
    expect((await deliverEvent(lastEvent('payment_intent.processing'))).status).toBe(200);
    woo().update(orderId, { status: 'processing' }); // the shop, in the admin
    return intent;
  }

  it('its success is recorded as the order\'s payment, never reported as a second one', async () => {
    const intent = await debitOnItsWay(4701);
    stripe().succeed(intent.id);
    expect((await deliverEvent(lastEvent('payment_intent.succeeded'))).status).toBe(200);
    expect(woo().get(4701)).toMatchObject({ status: 'processing', transaction_id: expect.stringMatching(/^ch_/) });
    expect(facts(4701).paid).toMatchObject({ intentId: intent.id });
  });

  it('its failure is recorded, and the shop told the order is not paid', async () => {
    const intent = await debitOnItsWay(4702);
    stripe().fail(intent.id, 'The bank refused the debit.');
    const failed = lastEvent('payment_intent.payment_failed');
    failed.created += 5;
    expect((await deliverEvent(failed)).status).toBe(200);
    expect(woo().get(4702).status).toBe('processing');
    expect(facts(4702).attempt).toMatchObject({ kind: 'failed' });
    expect((woo().notes.get(4702) ?? []).map((n) => n.note)).toEqual([expect.stringContaining('failed at Stripe: the order is not paid')]);
  });
});

describe('reconciliation, which reads newest first', () => {
  beforeEach(() => useTestEnv({ CARD_LIFECYCLE_EVENTS: 'async', CRON_SECRET: TEST_CRON_SECRET }));

  it('ends where the webhook\'s deliveries in order end: an older failure does not take back a newer debit', async () => {
    woo().seed({ id: 4601, currency: 'EUR', lines: [{ total: '30.00' }] });
    const intent = stripe().create({ amount: '3000', currency: 'eur', metadata: { shop_order_id: '4601' } });
    stripe().fail(intent.id);
    lastEvent('payment_intent.payment_failed').created -= 120;
    stripe().process(intent.id);

    const response = await reconcileGET(new Request('http://localhost:3000/api/cron/reconcile-payments', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ checked: 2, applied: 1, skipped: 1 });
    expect(woo().get(4601).status).toBe('on-hold');
    expect(woo().get(4601).customer_note).not.toMatch(/could not be completed/);
  });
});

describe('a dispute opened while a review holds the order', () => {
  beforeEach(() => useTestEnv({ CARD_LIFECYCLE_EVENTS: 'reviews,disputes' }));

  it('the review closes, the dispute is won: the paid order is back to processing, nothing holding it', async () => {
    const intent = await paidOrder(providers(), 4501);
    const { review, event: opened } = stripe().openReview(intent.id);
    expect((await deliverEvent(opened)).status).toBe(200);
    const { dispute, event: disputed } = stripe().dispute(intent.id);
    expect((await deliverEvent(disputed)).status).toBe(200);
    expect((await deliverEvent(stripe().closeReview(review.id, 'approved'))).status).toBe(200);
    expect(woo().get(4501).status).toBe('on-hold');
    expect((woo().notes.get(4501) ?? []).map((n) => n.note)).toContainEqual(`Stripe Radar review ${review.id} approved. The order stays on hold: a dispute still holds it.`);

    expect((await deliverEvent(stripe().closeDispute(dispute.id, 'won'))).status).toBe(200);
    expect(woo().get(4501).status).toBe('processing');
    expect((woo().notes.get(4501) ?? []).map((n) => n.note)).toContainEqual(`Stripe dispute ${dispute.id} closed (won). The order is back to processing.`);
  });
});
