/**
 * A refund or a dispute of a second payment for an order (the duplicate the
 * shop refunds after `card.duplicate_payment`) says nothing about the payment
 * that paid the order: it is logged and leaves the order as it is, instead of
 * booking a refund of the order's total or failing a paid order.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { StripeIntent } from '@/stand-ins/stripe/objects';
import { deliverEvent, paidOrder } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CARD_LIFECYCLE_EVENTS: 'refunds,disputes' });
  providers.reset();
});

/** A second intent for the order, paid too; its success event delivered (200, logged as a duplicate). */
async function secondPayment(orderId: number): Promise<StripeIntent> {
  const intent = providers.stripe.create({ amount: '3000', currency: 'usd', metadata: { shop_order_id: String(orderId) } });
  const paid = providers.stripe.succeed(intent.id);
  expect((await deliverEvent(providers.stripe.events.events.at(-1)!)).status).toBe(200);
  expect(loggedLines().some((line) => line.event === 'card.duplicate_payment')).toBe(true);
  return paid;
}

describe('events of another payment than the order’s', () => {
  it('a refund of the duplicate records no WooCommerce refund', async () => {
    await paidOrder(providers, 1501);
    const duplicate = await secondPayment(1501);
    const writesBefore = providers.calls.filter((call) => call.method !== 'GET').length;

    const { event } = providers.stripe.refund(duplicate.id);
    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });

    expect(providers.woo.refunds.get(1501) ?? []).toEqual([]);
    expect(providers.woo.get(1501).status).toBe('processing');
    expect(providers.calls.filter((call) => call.method !== 'GET')).toHaveLength(writesBefore);
    expect(loggedLines()).toContainEqual(expect.objectContaining({ event: 'card.other_payment_event', orderId: 1501, kind: 'refund' }));
  });

  it('a dispute of the duplicate, opened and lost, neither holds nor fails the paid order', async () => {
    await paidOrder(providers, 1502);
    const duplicate = await secondPayment(1502);
    const writesBefore = providers.calls.filter((call) => call.method !== 'GET').length;

    const { dispute, event } = providers.stripe.dispute(duplicate.id);
    expect((await deliverEvent(event)).status).toBe(200);
    expect((await deliverEvent(providers.stripe.closeDispute(dispute.id as string, 'lost'))).status).toBe(200);

    expect(providers.woo.get(1502).status).toBe('processing');
    expect(providers.calls.filter((call) => call.method !== 'GET')).toHaveLength(writesBefore);
  });

  it("a refund of the order's own payment is still recorded", async () => {
    const paid = await paidOrder(providers, 1503);
    await secondPayment(1503);
    const { event } = providers.stripe.refund(paid.id, 1000);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(providers.woo.refunds.get(1503)).toEqual([expect.objectContaining({ amount: '10.00' })]);
  });
});
