/**
 * The customer's own note and the service's messages (CUSTOMER_MESSAGES), and the payment's own fields
 * written as WooCommerce order properties, against the WooCommerce stand-in.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { POST as shippingWebhook } from '@/app/api/shipping/webhook/route';
import { customerNoteKeptNote, manualPaymentAwaitedNote, paymentFailedNote, shippedNote } from '@/lib/orders/notes';
import type { StripeIntent } from '@/stand-ins/stripe/objects';
import { cardEvent, signCardEvent, type CardEventType } from '@/stand-ins/webhook-deliveries';
import { freePort } from '@/stand-ins/loopback-http';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp, postJson, tokenFor } from '../support/requests';

const providers = useProviders();
const CUSTOMER_NOTE = 'Please leave the parcel at the back door.';
const ORDER_WRITE = /\/orders\/\d+$/;
const DECLINED = paymentFailedNote('Your card was declined.', false);

beforeEach(() => {
  useTestEnv();
  providers.reset();
  providers.storeFaults.clear();
});

function intentFor(orderId: number, amount: number): StripeIntent {
  return providers.stripe.create({ amount: String(amount), currency: 'usd', metadata: { shop_order_id: String(orderId) } });
}

/** Delivers one event (the same payload again is Stripe's retry of it). */
async function deliver(event: ReturnType<typeof cardEvent>): Promise<number> {
  const { payload, signature } = signCardEvent(event, TEST_WEBHOOK_SECRET);
  const response = await cardWebhook(
    new Request('http://localhost:3000/api/cardprovider/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
      body: payload,
    }),
  );
  return response.status;
}

const event = (type: CardEventType, intent: StripeIntent) => cardEvent(type, intent);
const keptMeta = (orderId: number) => providers.woo.get(orderId).meta_data.filter((m) => m.key === '_customer_note_at_checkout').map((m) => m.value);
const notes = (orderId: number, type: 'customer' | 'internal') => providers.woo.listNotes(orderId, type).map((n) => n.note);

describe('customer messages in customer_note (the default)', () => {
  it("keeps the customer's own note in meta and a private note when a message first replaces it, and not again", async () => {
    providers.woo.seed({ id: 2701, lines: [{ total: '10.00' }], customer_note: CUSTOMER_NOTE });
    const intent = intentFor(2701, 1000);

    expect(await deliver(event('payment_intent.payment_failed', providers.stripe.fail(intent.id)))).toBe(200);
    // The replacement and the kept note travel in the same update.
    const [update] = providers.orderUpdates(2701);
    expect(update).toMatchObject({ customer_note: DECLINED, meta_data: expect.arrayContaining([{ key: '_customer_note_at_checkout', value: CUSTOMER_NOTE }]) });
    expect(notes(2701, 'internal')).toEqual([customerNoteKeptNote(CUSTOMER_NOTE)]);

    // A later message replaces the service's own note: the customer's stays as it was kept.
    expect(await deliver(event('payment_intent.succeeded', providers.stripe.succeed(intent.id)))).toBe(200);
    expect(keptMeta(2701)).toEqual([CUSTOMER_NOTE]);
    expect(notes(2701, 'internal')).toEqual([customerNoteKeptNote(CUSTOMER_NOTE)]);
    expect(notes(2701, 'customer')).toEqual([]);
  });

  it("keeps the customer's note once when the update's answer is lost and Stripe retries the event", async () => {
    providers.woo.seed({ id: 2702, lines: [{ total: '10.00' }], customer_note: CUSTOMER_NOTE });
    const failed = event('payment_intent.payment_failed', providers.stripe.fail(intentFor(2702, 1000).id));
    providers.storeFaults.inject({ kind: 'reset', method: 'PUT', path: ORDER_WRITE, commit: 'after' });

    expect(await deliver(failed)).not.toBe(200);
    expect(await deliver(failed)).toBe(200);

    expect(providers.woo.get(2702).customer_note).toBe(DECLINED);
    expect(keptMeta(2702)).toEqual([CUSTOMER_NOTE]);
    expect(notes(2702, 'internal')).toEqual([customerNoteKeptNote(CUSTOMER_NOTE)]);
  });

  it("keeps the customer's note once when the update failed before the store applied it and the retry writes it", async () => {
    providers.woo.seed({ id: 2703, lines: [{ total: '10.00' }], customer_note: CUSTOMER_NOTE });
    const failed = event('payment_intent.payment_failed', providers.stripe.fail(intentFor(2703, 1000).id));
    providers.storeFaults.inject({ kind: 'status_502', method: 'PUT', path: ORDER_WRITE });

    expect(await deliver(failed)).not.toBe(200);
    expect(providers.woo.get(2703).customer_note).toBe(CUSTOMER_NOTE);
    expect(await deliver(failed)).toBe(200);

    expect(providers.woo.get(2703).customer_note).toBe(DECLINED);
    expect(keptMeta(2703)).toEqual([CUSTOMER_NOTE]);
    expect(notes(2703, 'internal')).toEqual([customerNoteKeptNote(CUSTOMER_NOTE)]);
  });

  it("keeps the customer's note once when the storefront repeats submit-order after a lost answer", async () => {
    providers.woo.seed({ id: 2706, customer_note: CUSTOMER_NOTE });
    const body = { token: await tokenFor(2706), billing_address: { first_name: 'Ada', country: 'US' } };
    providers.storeFaults.inject({ kind: 'reset', method: 'PUT', path: ORDER_WRITE, commit: 'after' });

    expect((await submitOrder(postJson('/api/submit-order', body))).status).not.toBe(200);
    expect((await submitOrder(postJson('/api/submit-order', body))).status).toBe(200);

    expect(providers.woo.get(2706).customer_note).toBe(manualPaymentAwaitedNote('Manual Payment (Zelle / Venmo)'));
    expect(keptMeta(2706)).toEqual([CUSTOMER_NOTE]);
    expect(notes(2706, 'internal')).toEqual([customerNoteKeptNote(CUSTOMER_NOTE)]);
  });

  it.each([
    ["through the companion plugin's merge (Redis down: the order's lock is not shared)", true, /shipment-packages$/],
    ['in the order update', false, ORDER_WRITE],
  ])("keeps the customer's note when the shipped message replaces it, %s", async (_how, redisDown, write) => {
    if (redisDown) useTestEnv({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, REDIS_TIMEOUT_MS: '300' });
    providers.woo.seed({ id: 2705, status: 'processing', customer_note: CUSTOMER_NOTE });
    const delivery = { resource_type: 'SHIP_NOTIFY', order_number: '2705', shipment_id: 91, tracking_number: '1Z999', carrier: 'UPS' };
    expect((await shippingWebhook(postJson('/api/shipping/webhook', delivery, { origin: null }))).status).toBe(200);
    // Two writes each way: `shipped`, which this store does not have, then `completed`.
    expect(providers.callsTo('store', redisDown ? 'POST' : 'PUT', write)).toHaveLength(2);

    expect(providers.woo.get(2705).customer_note).toBe(shippedNote({ trackingNumber: '1Z999', carrier: 'UPS' }));
    expect(keptMeta(2705)).toEqual([CUSTOMER_NOTE]);
    expect(notes(2705, 'internal')).toEqual([customerNoteKeptNote(CUSTOMER_NOTE)]);
  });

  it('keeps nothing when the order has no note of the customer', async () => {
    providers.woo.seed({ id: 2704, lines: [{ total: '10.00' }] });
    expect(await deliver(event('payment_intent.payment_failed', providers.stripe.fail(intentFor(2704, 1000).id)))).toBe(200);
    expect(keptMeta(2704)).toEqual([]);
    expect(notes(2704, 'internal')).toEqual([]);
  });
});

describe('customer messages as customer order notes (CUSTOMER_MESSAGES=order_notes)', () => {
  beforeEach(() => useTestEnv({ CUSTOMER_MESSAGES: 'order_notes' }));

  it('leaves customer_note to the customer and sends each message as a customer order note, which WooCommerce emails', async () => {
    providers.woo.seed({ id: 2711, lines: [{ total: '10.00' }], customer_note: CUSTOMER_NOTE });
    const intent = intentFor(2711, 1000);

    expect(await deliver(event('payment_intent.payment_failed', providers.stripe.fail(intent.id)))).toBe(200);
    expect(await deliver(event('payment_intent.succeeded', providers.stripe.succeed(intent.id)))).toBe(200);

    const order = providers.woo.get(2711);
    expect(order).toMatchObject({ status: 'processing', customer_note: CUSTOMER_NOTE });
    for (const update of providers.orderUpdates(2711)) expect(update).not.toHaveProperty('customer_note');
    expect(notes(2711, 'customer')).toEqual([DECLINED]);
    expect(keptMeta(2711)).toEqual([]);
  });

  it('sends the message once when the update failed and the event is retried', async () => {
    providers.woo.seed({ id: 2712, lines: [{ total: '10.00' }], customer_note: CUSTOMER_NOTE });
    const failed = event('payment_intent.payment_failed', providers.stripe.fail(intentFor(2712, 1000).id));
    providers.storeFaults.inject({ kind: 'status_502', method: 'PUT', path: ORDER_WRITE });

    expect(await deliver(failed)).not.toBe(200);
    expect(await deliver(failed)).toBe(200);

    expect(notes(2712, 'customer')).toEqual([DECLINED]);
    expect(providers.woo.get(2712).customer_note).toBe(CUSTOMER_NOTE);
  });

  it('sends the message once when the answer to the update is lost and the event is retried', async () => {
    providers.woo.seed({ id: 2713, lines: [{ total: '10.00' }], customer_note: CUSTOMER_NOTE });
    const failed = event('payment_intent.payment_failed', providers.stripe.fail(intentFor(2713, 1000).id));
    providers.storeFaults.inject({ kind: 'reset', method: 'PUT', path: ORDER_WRITE, commit: 'after' });

    expect(await deliver(failed)).not.toBe(200);
    expect(await deliver(failed)).toBe(200);

    expect(notes(2713, 'customer')).toEqual([DECLINED]);
  });

  it('sends the manual-payment message of submit-order as a customer order note', async () => {
    providers.woo.seed({ id: 2714, customer_note: CUSTOMER_NOTE });
    const response = await submitOrder(postJson('/api/submit-order', { token: await tokenFor(2714), billing_address: { first_name: 'Ada', country: 'US' } }));

    expect(response.status).toBe(200);
    expect(providers.woo.get(2714).customer_note).toBe(CUSTOMER_NOTE);
    expect(notes(2714, 'customer')).toEqual([manualPaymentAwaitedNote('Manual Payment (Zelle / Venmo)')]);
  });

  it('sends the manual-payment message once when the storefront repeats submit-order after a lost answer', async () => {
    providers.woo.seed({ id: 2716, customer_note: CUSTOMER_NOTE });
    const body = { token: await tokenFor(2716), billing_address: { first_name: 'Ada', country: 'US' } };
    providers.storeFaults.inject({ kind: 'reset', method: 'PUT', path: ORDER_WRITE, commit: 'after' });

    expect((await submitOrder(postJson('/api/submit-order', body))).status).not.toBe(200);
    expect((await submitOrder(postJson('/api/submit-order', body))).status).toBe(200);

    expect(notes(2716, 'customer')).toEqual([manualPaymentAwaitedNote('Manual Payment (Zelle / Venmo)')]);
    expect(providers.woo.get(2716).customer_note).toBe(CUSTOMER_NOTE);
  });

  it('sends the shipped message as a customer order note and leaves customer_note alone', async () => {
    providers.woo.seed({ id: 2715, status: 'processing', customer_note: CUSTOMER_NOTE });
    const delivery = { resource_type: 'SHIP_NOTIFY', order_number: '2715', tracking_number: '1Z999', carrier: 'UPS' };
    const response = await shippingWebhook(postJson('/api/shipping/webhook', delivery, { origin: null }));

    expect(response.status).toBe(200);
    expect(providers.woo.get(2715).customer_note).toBe(CUSTOMER_NOTE);
    expect(notes(2715, 'customer')).toEqual([shippedNote({ trackingNumber: '1Z999', carrier: 'UPS' })]);
  });

  it("writes no line into customer_note when the plugin finds the order shipped meanwhile and keeps the package as a later one", async () => {
    useTestEnv({ CUSTOMER_MESSAGES: 'order_notes', REDIS_URL: `redis://127.0.0.1:${await freePort()}`, REDIS_TIMEOUT_MS: '300' });
    providers.woo.seed({ id: 2718, status: 'processing', customer_note: CUSTOMER_NOTE });
    const merge = providers.holdStore('POST', /\/orders\/2718\/shipment-packages$/);
    const delivery = { resource_type: 'SHIP_NOTIFY', order_number: '2718', shipment_id: 84, tracking_number: 'LATER', carrier: 'UPS' };
    const delivering = shippingWebhook(postJson('/api/shipping/webhook', delivery, { origin: null }));
    await merge.reached;
    // Another instance shipped the order with its own package while this delivery's merge was on its way.
    providers.woo.update(2718, { status: 'completed', meta_data: [{ key: '_shipment_packages', value: '[]' }] });
    merge.release();

    expect((await delivering).status).toBe(200);
    expect(providers.woo.get(2718)).toMatchObject({ status: 'completed', customer_note: CUSTOMER_NOTE });
  });

  it('sends a later package as a customer order note of its own, the customer_note untouched', async () => {
    providers.woo.seed({ id: 2717, status: 'processing', customer_note: CUSTOMER_NOTE });
    const ship = (shipmentId: number, tracking: string) =>
      shippingWebhook(postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: '2717', shipment_id: shipmentId, tracking_number: tracking, carrier: 'UPS' }, { origin: null }));
    expect((await ship(81, 'FIRST')).status).toBe(200);
    expect((await ship(82, 'SECOND')).status).toBe(200);

    expect(providers.woo.get(2717).customer_note).toBe(CUSTOMER_NOTE);
    expect(notes(2717, 'customer')).toEqual([
      'Another package of your order has been shipped! Tracking Number: SECOND | Carrier: UPS',
      shippedNote({ trackingNumber: 'FIRST', carrier: 'UPS' }),
    ]);
  });
});

describe("the payment's own fields", () => {
  it('records a card payment with no "doing it wrong" notice on the store', async () => {
    providers.woo.seed({ id: 2721, lines: [{ total: '10.00' }] });
    expect(await deliver(event('payment_intent.succeeded', providers.stripe.succeed(intentFor(2721, 1000).id)))).toBe(200);

    expect(providers.woo.get(2721)).toMatchObject({ status: 'processing', payment_method: 'cardprovider', payment_method_title: 'Credit Card (cardprovider)', transaction_id: expect.stringMatching(/^ch_/) });
    expect(providers.woo.phpNotices()).toEqual([]);
  });
});
