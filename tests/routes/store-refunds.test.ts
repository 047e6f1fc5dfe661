/**
 * Refunds from the WooCommerce admin (docs/decisions.md#d15): the companion plugin's
 * gateway (its stand-in, stand-ins/woocommerce/companion-gateway.ts) calls
 * POST /api/store/refunds from WooCommerce's process_refund; the money moves
 * at Stripe once per WooCommerce refund, and the later `charge.refunded`
 * records nothing twice. Without STORE_CALLBACK_SECRET nothing happens.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as refundsPOST } from '@/app/api/store/refunds/route';
import { refundIdempotencyKey } from '@/lib/store-callbacks/refund';
import { UNSETTLED_STORE_REFUND_MS } from '@/lib/orders/refund-link';
import { WooError } from '@/stand-ins/woocommerce/model';
import { deliverEvent, paidOrder as paidOrderAt } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { callStore, TEST_STORE_CALLBACK_SECRET, testGateway } from '../support/store-callbacks';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, CARD_LIFECYCLE_EVENTS: 'refunds' });
  providers.reset();
  providers.woo.gateway = testGateway();
});

const paidOrder = (orderId: number) => paidOrderAt(providers, orderId);
const refundsOf = (orderId: number) => providers.woo.refunds.get(orderId) ?? [];
const stripeRefundCreates = () => providers.callsTo('card', 'POST', /^\/v1\/refunds$/);
const lastChargeRefunded = () => providers.stripe.events.events.filter((e) => e.type === 'charge.refunded').at(-1)!;

/** What the admin's "Refund via Credit Card" button does: wc_create_refund with refund_payment. */
const refundFromAdmin = (orderId: number, amount: string, reason = 'Damaged in transit') =>
  providers.woo.createRefundViaGateway(orderId, { amount, reason });

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WooError);
  return (error as WooError).message;
}

describe('a refund clicked in the WooCommerce admin', () => {
  it('refunds at Stripe with metadata naming the WooCommerce refund, keyed by it, and keeps the Stripe id on the refund', async () => {
    const intent = await paidOrder(2101);

    const refund = await refundFromAdmin(2101, '12.50');

    const [stripeRefund] = [...providers.stripe.refunds.values()];
    expect(stripeRefund).toMatchObject({
      amount: 1250,
      payment_intent: intent.id,
      metadata: { shop_order_id: '2101', shop_refund_id: String(refund.id), shop_refund_reason: 'Damaged in transit' },
    });
    expect(stripeRefundCreates()[0]!.headers['idempotency-key']).toBe(refundIdempotencyKey(2101, refund.id, 1250));
    expect(refund).toMatchObject({ amount: '12.50', refunded_payment: true });
    expect(refund.meta_data).toContainEqual(expect.objectContaining({ key: '_provider_refund_id', value: stripeRefund!.id }));
  });

  it('is recorded once when the charge.refunded event arrives after it', async () => {
    await paidOrder(2102);
    await refundFromAdmin(2102, '10.00');

    expect(await deliverEvent(lastChargeRefunded())).toEqual({ status: 200, body: { received: true } });

    expect(refundsOf(2102).map((r) => r.amount)).toEqual(['10.00']);
    expect(providers.callsTo('store', 'POST', /\/orders\/2102\/refunds$/)).toEqual([]);
  });

  it('is recognised by the Stripe refund’s metadata alone once WooCommerce can no longer drop it, the plugin never having written the Stripe id', async () => {
    await paidOrder(2103);
    // WooCommerce's refund exists; the call is made as the plugin makes it, but nothing keeps the answer.
    const saved = providers.woo.createRefund(2103, { amount: '7.00', api_refund: false });
    expect((await callStore('refunds', { order_id: 2103, refund_id: saved.id, amount: '7.00' })).status).toBe(200);
    providers.woo.backdateRefund(saved.id, UNSETTLED_STORE_REFUND_MS);

    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);

    expect(refundsOf(2103).map((r) => r.id)).toEqual([saved.id]);
  });

  it('is recorded by charge.refunded when WooCommerce dropped its refund after an answer it never got', async () => {
    await paidOrder(2104);
    const saved = providers.woo.createRefund(2104, { amount: '7.00', api_refund: false });
    const answer = await callStore('refunds', { order_id: 2104, refund_id: saved.id, amount: '7.00' });
    providers.woo.deleteRefund(2104, saved.id, true);

    expect((await deliverEvent(lastChargeRefunded())).status).toBe(200);

    expect(refundsOf(2104)).toEqual([
      expect.objectContaining({ amount: '7.00', meta_data: [expect.objectContaining({ key: '_provider_refund_id', value: answer.body.refund_id })] }),
    ]);
  });

  it('answers a repeated call for the same WooCommerce refund with the refund already made, without asking Stripe to refund again', async () => {
    await paidOrder(2105);
    const saved = providers.woo.createRefund(2105, { amount: '5.00', api_refund: false });
    const call = { order_id: 2105, refund_id: saved.id, amount: '5.00', reason: null };

    const first = await callStore('refunds', call);
    const second = await callStore('refunds', call);

    expect(first).toEqual({ status: 200, body: { refund_id: expect.stringMatching(/^re_/), amount: '5.00' } });
    expect(second).toEqual(first);
    expect(stripeRefundCreates()).toHaveLength(1);
    expect(providers.stripe.refunds.size).toBe(1);
  });

  it('is refunded once when the plugin retries a call whose answer was lost', async () => {
    await paidOrder(2106);
    let attempts = 0;
    providers.woo.gateway = testGateway({
      send: async (request) => {
        attempts += 1;
        const response = await refundsPOST(request);
        if (attempts === 1) throw new TypeError('fetch failed: the connection closed before the answer');
        return response;
      },
    });

    const refund = await refundFromAdmin(2106, '9.00');

    expect(attempts).toBe(2);
    expect(providers.stripe.refunds.size).toBe(1);
    expect(refund.refunded_payment).toBe(true);
  });
});

describe('a refund the service refuses shows the reason in the admin, and WooCommerce drops its refund', () => {
  it('a disputed payment: Stripe’s reason, in plain words', async () => {
    const intent = await paidOrder(2111);
    providers.stripe.dispute(intent.id);

    const message = await refusal(refundFromAdmin(2111, '10.00'));

    expect(message).toMatch(/disputed this payment with their bank/);
    expect(refundsOf(2111)).toEqual([]);
    expect(providers.stripe.refunds.size).toBe(0);
  });

  it('a refund made at Stripe that WooCommerce does not show yet: refused rather than paid back twice', async () => {
    const intent = await paidOrder(2112);
    providers.stripe.refund(intent.id, 1000);

    const message = await refusal(refundFromAdmin(2112, '10.00'));

    expect(message).toMatch(/Stripe has already refunded 10\.00 USD of this payment, more than the 0\.00 USD the order shows/);
    expect(providers.stripe.refunds.size).toBe(1);
    expect(refundsOf(2112)).toEqual([]);
  });

  it('Stripe not answering: 502, nothing kept in WooCommerce', async () => {
    await paidOrder(2113);
    providers.failCard('POST', /^\/v1\/refunds$/, 500, 'api_error', 'internal', 4);

    const message = await refusal(refundFromAdmin(2113, '10.00'));

    expect(message).toBe('Stripe could not be reached or did not answer: try again in a moment.');
    expect(refundsOf(2113)).toEqual([]);
  });

  it('an order paid manually (Zelle / Venmo) is not refunded through the gateway', async () => {
    providers.woo.seed({ id: 2114, status: 'processing', lines: [{ total: '30.00' }], meta_data: [{ key: '_payment_method', value: 'manual' }] });
    const saved = providers.woo.createRefund(2114, { amount: '5.00', api_refund: false });

    const answer = await callStore('refunds', { order_id: 2114, refund_id: saved.id, amount: '5.00' });

    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/was not paid by card/);
    expect(providers.callsTo('card')).toEqual([]);
  });

  it('an amount other than the WooCommerce refund’s, or a refund the order does not have', async () => {
    await paidOrder(2115);
    const saved = providers.woo.createRefund(2115, { amount: '5.00', api_refund: false });

    const other = await callStore('refunds', { order_id: 2115, refund_id: saved.id, amount: '25.00' });
    const missing = await callStore('refunds', { order_id: 2115, refund_id: saved.id + 1, amount: '5.00' });

    expect(other).toEqual({ status: 400, body: { error: `The amount does not match refund #${saved.id} as the store holds it.` } });
    expect(missing).toEqual({ status: 400, body: { error: `Order #2115 has no refund #${saved.id + 1} in the store.` } });
    expect(providers.stripe.refunds.size).toBe(0);
  });
});

describe('the signature', () => {
  it('a valid one is accepted; a stale, a wrong or a missing one is 401 before the store or Stripe is asked anything', async () => {
    await paidOrder(2131);
    const saved = providers.woo.createRefund(2131, { amount: '5.00', api_refund: false });
    const call = { order_id: 2131, refund_id: saved.id, amount: '5.00' };
    providers.calls.length = 0;
    const now = Math.floor(Date.now() / 1000);

    expect(await callStore('refunds', call, { at: now - 301 })).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(await callStore('refunds', call, { secret: `${TEST_STORE_CALLBACK_SECRET}-other` })).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(await callStore('refunds', call, { header: null })).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(providers.calls).toEqual([]);

    expect((await callStore('refunds', call, { at: now - 250 })).status).toBe(200);
  });
});

describe('without STORE_CALLBACK_SECRET', () => {
  it('answers 503 and changes nothing, without a single upstream call', async () => {
    await paidOrder(2121);
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'refunds' });
    providers.calls.length = 0;

    const answer = await callStore('refunds', { order_id: 2121, refund_id: 1, amount: '5.00' });

    expect(answer).toEqual({ status: 503, body: { error: 'STORE_CALLBACK_SECRET is not set: the service takes no calls from the store' } });
    expect(providers.calls).toEqual([]);
  });
});
