/**
 * `payment_intent.canceled` (STRIPE_CAPTURE other than automatic): Stripe's own cancel of an
 * authorization nobody captured is told apart from one asked for; an order still waiting for the
 * authorization becomes `failed` with a note for the shop, once; no money moves.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { handledEventTypes } from '@/lib/card-payments/apply-event';
import { parseConfig } from '@/lib/config';
import { resetServices } from '@/lib/services';
import { deliverEvent } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { callStore, TEST_STORE_CALLBACK_SECRET } from '../support/store-callbacks';

const providers = useProviders();
const ENV = { STRIPE_CAPTURE: 'on_shipment', STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET };

beforeEach(() => {
  useTestEnv(ENV);
  providers.reset();
});

const lastEvent = (type: string) => providers.stripe.events.events.filter((e) => e.type === type).at(-1)!;
const meta = (orderId: number, key: string) => providers.woo.get(orderId).meta_data.find((m) => m.key === key)?.value;
const moneyCalls = () => providers.callsTo('card', 'POST', /\/capture$|^\/v1\/refunds$/);

/** A 30.00 order whose card is authorized, the authorization recorded: on hold. */
async function authorizedOrder(orderId: number): Promise<string> {
  providers.woo.seed({ id: orderId, lines: [{ total: '30.00' }] });
  const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
  const intentId = ((await response.json()) as { payment_intent_id: string }).payment_intent_id;
  providers.stripe.authorize(intentId);
  expect((await deliverEvent(lastEvent('payment_intent.amount_capturable_updated'))).status).toBe(200);
  return intentId;
}

describe('payment_intent.canceled', () => {
  it.each(['automatic', 'expired'] as const)('Stripe lapsed the authorization (%s): the order becomes failed with a note, once, and no money moves', async (reason) => {
    const intentId = await authorizedOrder(4101);
    const event = providers.stripe.lapseAuthorization(intentId, reason);

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });
    expect(providers.woo.get(4101).status).toBe('failed');
    expect(meta(4101, '_payment_authorized_at')).toBe('');
    expect(providers.woo.listNotes(4101)).toEqual([
      expect.objectContaining({ customer_note: false, note: expect.stringContaining(`The card authorization ${intentId} lapsed at Stripe before it was captured`) }),
    ]);

    // Redelivered, and after the memory of applied events is lost: one update, one note.
    const updates = providers.orderUpdates(4101).length;
    expect((await deliverEvent(event)).status).toBe(200);
    resetServices();
    useTestEnv(ENV);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(providers.orderUpdates(4101)).toHaveLength(updates);
    expect(providers.woo.listNotes(4101)).toHaveLength(1);
    expect(moneyCalls()).toEqual([]);
  });

  it('cancelled at Stripe on request (the Dashboard) while the order waits: failed, the note names the reason', async () => {
    const intentId = await authorizedOrder(4102);
    providers.stripe.cancel(intentId, { cancellation_reason: 'requested_by_customer' });

    expect((await deliverEvent(lastEvent('payment_intent.canceled'))).status).toBe(200);
    expect(providers.woo.get(4102).status).toBe('failed');
    expect(providers.woo.listNotes(4102)).toEqual([
      expect.objectContaining({ note: expect.stringContaining(`${intentId} was cancelled at Stripe (reason: requested_by_customer)`) }),
    ]);
  });

  it("the service's own release of a cancelled order's authorization is recorded, and changes nothing else", async () => {
    await authorizedOrder(4103);
    providers.woo.orders.get(4103)!.status = 'cancelled';
    expect(await callStore('cancelAuthorization', { order_id: 4103 })).toEqual({ status: 200, body: { canceled: true } });
    const updates = providers.orderUpdates(4103).length;

    expect((await deliverEvent(lastEvent('payment_intent.canceled'))).status).toBe(200);
    expect(providers.woo.get(4103).status).toBe('cancelled');
    // The release joins the order's payment facts (so a reopened order never tries to capture it); nothing else.
    expect(providers.orderUpdates(4103).slice(updates)).toEqual([{ meta_data: expect.any(Array) }]);
    const facts = JSON.parse(String(providers.woo.get(4103).meta_data.find((m) => m.key === '_cardprovider_payment')?.value));
    expect(facts.authorization).toMatchObject({ released: true });
    expect(providers.woo.listNotes(4103)).toEqual([]);
  });

  it('an authorized order the shop moved on by hand keeps its status; the note says the card will not be charged', async () => {
    const intentId = await authorizedOrder(4104);
    providers.woo.orders.get(4104)!.status = 'processing';
    const updates = providers.orderUpdates(4104).length;

    expect((await deliverEvent(providers.stripe.lapseAuthorization(intentId))).status).toBe(200);
    expect(providers.woo.get(4104).status).toBe('processing');
    // The release is recorded with the order's payment facts; its status stays the shop's.
    expect(providers.orderUpdates(4104).slice(updates)).toEqual([expect.not.objectContaining({ status: expect.anything() })]);
    expect(providers.woo.listNotes(4104)).toEqual([expect.objectContaining({ note: expect.stringContaining('lapsed at Stripe') })]);
  });

  it('an intent the checkout replaced, and one on an order never authorized, change nothing', async () => {
    providers.woo.seed({ id: 4105, lines: [{ total: '30.00' }] });
    const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(4105) }));
    const waiting = ((await response.json()) as { payment_intent_id: string }).payment_intent_id;
    providers.stripe.cancel(waiting, { cancellation_reason: 'abandoned' });
    const other = providers.stripe.create({ amount: '3000', currency: 'usd', capture_method: 'manual', metadata: { shop_order_id: '4105' } });
    providers.stripe.authorize(other.id);
    const otherCanceled = providers.stripe.lapseAuthorization(other.id);

    expect((await deliverEvent(lastEvent('payment_intent.canceled'))).status).toBe(200);
    expect((await deliverEvent(otherCanceled)).status).toBe(200);
    expect(providers.woo.get(4105).status).toBe('pending');
    expect(providers.woo.listNotes(4105)).toEqual([]);
  });

  it('is handled (and reconciled) only when manual capture is on', () => {
    const base = { NODE_ENV: 'test' };
    expect(handledEventTypes(parseConfig({ ...base, STRIPE_CAPTURE: 'manual' }))).toContain('payment_intent.canceled');
    expect(handledEventTypes(parseConfig(base))).not.toContain('payment_intent.canceled');
  });
});
