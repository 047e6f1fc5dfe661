/**
 * CARD_LIFECYCLE_EVENTS=refunds (docs/decisions.md#d24): a refund made at Stripe becomes a
 * WooCommerce refund, once per Stripe refund id, in any order and however
 * often it is delivered; with the setting off nothing changes.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { reconcilePayments } from '@/lib/cron/reconcile-payments';
import { getServices } from '@/lib/services';
import { UNSETTLED_STORE_REFUND_MS } from '@/lib/orders/refund-link';
import { deliverEvent, paidOrder as paidOrderAt } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CARD_LIFECYCLE_EVENTS: 'refunds' });
  providers.reset();
});

const paidOrder = (orderId: number, recorded = true) => paidOrderAt(providers, orderId, recorded);

const refundsOf = (orderId: number) => providers.woo.refunds.get(orderId) ?? [];
const refundIdsOf = (orderId: number) => refundsOf(orderId).map((r) => r.meta_data.find((m) => m.key === '_provider_refund_id')?.value);

describe('charge.refunded', () => {
  it('records a partial refund as a WooCommerce refund, recording only, and leaves the order processing', async () => {
    const intent = await paidOrder(1301);
    const { refund, event } = providers.stripe.refund(intent.id, 1000);

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });

    expect(refundsOf(1301)).toEqual([expect.objectContaining({ amount: '10.00', refunded_payment: false })]);
    expect(refundIdsOf(1301)).toEqual([refund.id]);
    expect(providers.woo.get(1301).status).toBe('processing');
    const create = providers.callsTo('store', 'POST', /\/orders\/1301\/refunds$/)[0]!;
    expect(create.body).toMatchObject({ amount: '10.00', api_refund: false, api_restock: false });
  });

  it('records a partial then a full refund once each, and WooCommerce marks the order refunded', async () => {
    const intent = await paidOrder(1302);
    const first = providers.stripe.refund(intent.id, 1000);
    const second = providers.stripe.refund(intent.id);

    // The later event lists both refunds; delivered first, it records both; the earlier one then finds them recorded.
    expect((await deliverEvent(second.event)).status).toBe(200);
    expect((await deliverEvent(first.event)).status).toBe(200);

    expect(refundIdsOf(1302).sort()).toEqual([first.refund.id, second.refund.id].sort());
    expect(refundsOf(1302).map((r) => r.amount).sort()).toEqual(['10.00', '20.00']);
    expect(providers.woo.get(1302).status).toBe('refunded');
  });

  it('records two partial refunds on one charge once each, delivered in order', async () => {
    const intent = await paidOrder(1307);
    const first = providers.stripe.refund(intent.id, 1000);
    expect((await deliverEvent(first.event)).status).toBe(200);
    const second = providers.stripe.refund(intent.id, 500);
    expect((await deliverEvent(second.event)).status).toBe(200);

    expect(refundsOf(1307).map((r) => r.amount)).toEqual(['10.00', '5.00']);
    expect(refundIdsOf(1307)).toEqual([first.refund.id, second.refund.id]);
    expect(providers.woo.get(1307).status).toBe('processing');
  });

  it('records nothing twice when the same event is delivered again or concurrently', async () => {
    const intent = await paidOrder(1303);
    const { event } = providers.stripe.refund(intent.id, 500);

    const answers = await Promise.all(Array.from({ length: 6 }, () => deliverEvent(event)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await deliverEvent(event)).status).toBe(200);

    expect(refundsOf(1303)).toHaveLength(1);
    expect(providers.callsTo('store', 'POST', /\/orders\/1303\/refunds$/)).toHaveLength(1);
  });

  it('answers 400 for a refund that arrives before the payment is recorded, and records it on the retry after', async () => {
    const intent = await paidOrder(1304, false);
    const { event } = providers.stripe.refund(intent.id, 1000);

    const early = await deliverEvent(event);
    expect(early.status).toBe(400);
    expect(refundsOf(1304)).toEqual([]);

    const paidEvent = providers.stripe.events.events.find((e) => e.type === 'payment_intent.succeeded')!;
    expect((await deliverEvent(paidEvent)).status).toBe(200);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(refundsOf(1304).map((r) => r.amount)).toEqual(['10.00']);
    expect(providers.woo.get(1304).status).toBe('processing');
  });

  it('finds the order through the payment intent, and answers an intent without an order as a missing order id', async () => {
    providers.woo.seed({ id: 1305, lines: [{ total: '30.00' }] });
    const stray = providers.stripe.create({ amount: '3000', currency: 'usd', metadata: {} });
    providers.stripe.succeed(stray.id);
    const { event } = providers.stripe.refund(stray.id, 1000);

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });
    expect(providers.callsTo('store')).toEqual([]);
    expect(providers.callsTo('card', 'GET', /\/v1\/payment_intents\//)).toHaveLength(1);
  });

  it('a redelivered refund event, already applied, costs no second call to find its order', async () => {
    const intent = await paidOrder(1308);
    const { event } = providers.stripe.refund(intent.id, 1000);
    expect((await deliverEvent(event)).status).toBe(200);
    const lookups = () => providers.callsTo('card', 'GET', /\/v1\/payment_intents\//).length;
    const storeCalls = () => providers.callsTo('store').length;
    const [before, storeBefore] = [lookups(), storeCalls()];

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });
    expect(lookups()).toBe(before);
    expect(storeCalls()).toBe(storeBefore);
    expect(refundsOf(1308)).toHaveLength(1);
  });

  it('does not record a refund larger than what remains on the order, and logs it for the shop', async () => {
    const intent = await paidOrder(1306);
    // A "Refund manually" entry old enough that WooCommerce will not drop it any more.
    const manual = providers.woo.createRefund(1306, { amount: '25.00', api_refund: false });
    providers.woo.backdateRefund(manual.id, UNSETTLED_STORE_REFUND_MS);
    const { event } = providers.stripe.refund(intent.id, 1000);

    expect((await deliverEvent(event)).status).toBe(200);
    expect(refundsOf(1306)).toHaveLength(1);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'card.refund_not_recordable', level: 'error', orderId: 1306, amount: 1000, remaining: 500 }));
  });

  it('records two refunds once each when their events are delivered at the same moment, several times over', async () => {
    const intent = await paidOrder(1308);
    const first = providers.stripe.refund(intent.id, 700);
    const second = providers.stripe.refund(intent.id, 800);

    const answers = await Promise.all([first.event, second.event, first.event, second.event].map((event) => deliverEvent(event)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);

    expect(refundIdsOf(1308).sort()).toEqual([first.refund.id, second.refund.id].sort());
    expect(providers.callsTo('store', 'POST', /\/orders\/1308\/refunds$/)).toHaveLength(2);
  });
});

describe('charge.refund.updated', () => {
  it('removes the refund it recorded when the refund failed, with a private note', async () => {
    const intent = await paidOrder(1311);
    const { refund, event } = providers.stripe.refund(intent.id, 1000);
    expect((await deliverEvent(event)).status).toBe(200);

    expect((await deliverEvent(providers.stripe.updateRefund(refund.id, 'failed'))).status).toBe(200);

    expect(refundsOf(1311)).toEqual([]);
    expect(providers.woo.notes.get(1311)).toEqual([expect.objectContaining({ customer_note: false, note: expect.stringContaining(refund.id) })]);
  });

  it('does the same for refund.updated, and a second update event for the same refund finds nothing left to do', async () => {
    const intent = await paidOrder(1313);
    const { refund, event } = providers.stripe.refund(intent.id, 1000);
    expect((await deliverEvent(event)).status).toBe(200);
    const charge = providers.stripe.updateRefund(refund.id, 'failed');

    expect((await deliverEvent({ ...charge, id: `${charge.id}_refund`, type: 'refund.updated' })).status).toBe(200);
    expect(refundsOf(1313)).toEqual([]);
    expect((await deliverEvent(charge)).status).toBe(200);
    expect(providers.woo.notes.get(1313)).toHaveLength(1);
  });

  it('arriving before charge.refunded finds nothing to remove, and the refund is then not recorded', async () => {
    const intent = await paidOrder(1312);
    const { refund, event } = providers.stripe.refund(intent.id, 1000);
    const canceled = providers.stripe.updateRefund(refund.id, 'canceled');

    expect((await deliverEvent(canceled)).status).toBe(200);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(refundsOf(1312)).toEqual([]);
  });
});

describe('with CARD_LIFECYCLE_EVENTS empty', () => {
  it('acknowledges refund events and changes nothing, without a single upstream call', async () => {
    const intent = await paidOrder(1321);
    useTestEnv();
    providers.calls.length = 0;
    const { refund, event } = providers.stripe.refund(intent.id, 1000);

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });
    expect(await deliverEvent(providers.stripe.updateRefund(refund.id, 'failed'))).toEqual({ status: 200, body: { received: true } });
    expect(providers.calls).toEqual([]);
    expect(refundsOf(1321)).toEqual([]);
  });
});

describe('reconciliation with refunds on', () => {
  it('lists refund events too and records a refund whose webhook never arrived, once', async () => {
    const intent = await paidOrder(1331);
    providers.stripe.refund(intent.id, 1200);
    const everything = { fits: () => true };

    const first = await reconcilePayments(getServices(), everything);
    expect(first).toMatchObject({ failed: [] });
    // The stand-in filters by `types[]`: the refund is found only because the enabled types are asked for.
    expect(refundsOf(1331).map((r) => r.amount)).toEqual(['12.00']);

    await reconcilePayments(getServices(), everything);
    expect(refundsOf(1331)).toHaveLength(1);
  });
});
