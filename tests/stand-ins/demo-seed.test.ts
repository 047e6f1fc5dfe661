/**
 * The demo's seeded world holds together: an order the shop records as paid
 * by card is a payment the Stripe stand-in knows, for the same amount, so the
 * demo page's Refund and Dispute buttons work on it from the start.
 */
import { describe, expect, it } from 'vitest';
import { toMinorUnits } from '@/lib/money';
import { createDemoModels, DEMO_ORDERS } from '@/stand-ins/demo/world';

describe('the seeded demo orders', () => {
  const { woocommerce, stripe } = createDemoModels();
  const paidByCard = DEMO_ORDERS.map((o) => woocommerce.get(o.id)).filter((order) =>
    order.meta_data.some((m) => m.key === '_provider_payment_intent_id'),
  );

  it('include an order paid by card', () => {
    expect(paidByCard.map((order) => order.id)).toEqual([1004]);
  });

  it.each(paidByCard.map((order) => [order.id, order] as const))('order %i is paid at the Stripe stand-in for its total, with its charge on the order', (id, order) => {
    const intentId = order.meta_data.find((m) => m.key === '_provider_payment_intent_id')?.value as string;
    const intent = stripe.retrieve(intentId);
    expect(intent).toMatchObject({
      status: 'succeeded',
      amount: toMinorUnits(order.total, order.currency),
      amount_received: toMinorUnits(order.total, order.currency),
      currency: order.currency.toLowerCase(),
      metadata: { shop_order_id: String(id) },
    });
    expect(order.transaction_id).toBe(intent.latest_charge);
    expect(order).toMatchObject({ status: 'processing', payment_method: 'cardprovider' });
    expect(order.date_paid).not.toBeNull();
  });

  it('the paid order can be refunded and disputed at the Stripe stand-in', () => {
    const { stripe: fresh, woocommerce: shop } = createDemoModels();
    const intentId = shop.get(1004).meta_data.find((m) => m.key === '_provider_payment_intent_id')?.value as string;
    expect(fresh.refund(intentId, 1000).refund).toMatchObject({ amount: 1000, payment_intent: intentId });
    expect(fresh.dispute(intentId).dispute).toMatchObject({ payment_intent: intentId, status: 'needs_response' });
  });

  it('record no payment event: the seeded payment predates the stand-in', () => {
    expect(stripe.events.list(new URLSearchParams()).body).toMatchObject({ data: [] });
  });
});
