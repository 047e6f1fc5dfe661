/**
 * What a card payment leaves on the order (docs/decisions.md#d13 and docs/decisions.md#d14): a paid date
 * on every kind of order, and no stale state from an earlier manual
 * submission or failed attempt. The store behind msw is the WooCommerce
 * stand-in, which behaves as WooCommerce 11 does (date_paid read-only, stamped
 * only at the payment-complete status; `_date_paid` meta mapped to it, without a notice when the companion
 * plugin takes it; meta
 * without an id replacing the entry with its key).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { paymentFailedNote, PAYMENT_RECEIVED_NOTE } from '@/lib/orders/notes';
import type { StripeIntent } from '@/stand-ins/stripe/objects';
import { cardEvent, signCardEvent, type CardEventType } from '@/stand-ins/webhook-deliveries';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp, postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

/** A payment intent for the order, as the checkout would have created it. */
function intentFor(orderId: number, amount: number, currency = 'usd'): StripeIntent {
  return providers.stripe.create({ amount: String(amount), currency, metadata: { shop_order_id: String(orderId) } });
}

async function deliver(type: CardEventType, intent: StripeIntent): Promise<number> {
  const { payload, signature } = signCardEvent(cardEvent(type, intent), TEST_WEBHOOK_SECRET);
  const response = await cardWebhook(
    new Request('http://localhost:3000/api/cardprovider/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
      body: payload,
    }),
  );
  return response.status;
}

const metaOf = (orderId: number) => providers.woo.get(orderId).meta_data;
const valuesOf = (orderId: number, key: string) => metaOf(orderId).filter((m) => m.key === key).map((m) => m.value);

describe('paid date on every order', () => {
  it('gives an order of e-books only (virtual and downloadable) its paid date in the same write, with no notice through the companion plugin, and leaves it processing', async () => {
    providers.woo.seed({
      id: 901,
      lines: [
        { name: 'Analytical engine (e-book)', total: '9.00', virtual: true, downloadable: true },
        { name: 'Notes on the engine (PDF)', total: '3.00', virtual: true, downloadable: true },
      ],
    });
    const intent = intentFor(901, 1200);

    expect(await deliver('payment_intent.succeeded', providers.stripe.succeed(intent.id))).toBe(200);

    // WooCommerce ignores date_paid on write and, for this order, would stamp it only at `completed`.
    expect(providers.orderUpdates(901)).toHaveLength(1);
    const [paid] = providers.orderUpdates(901);
    expect(paid!.meta_data).toContainEqual({ key: '_date_paid', value: expect.stringMatching(/^\d+$/) });
    const order = providers.woo.get(901);
    expect(order.status).toBe('processing');
    expect(order.date_paid).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(order.date_paid_gmt).toBe(order.date_paid);
    expect(order.date_paid).toBe((paid!.date_paid as string).slice(0, 19));
    expect(providers.woo.phpNotices()).toEqual([]);
  });

  it('gives an e-book order its paid date on a store without the companion plugin too, with the one meta notice WooCommerce then leaves no way around', async () => {
    providers.woo.cartBridgeInstalled = false;
    providers.woo.seed({ id: 903, lines: [{ name: 'Analytical engine (e-book)', total: '9.00', virtual: true, downloadable: true }] });
    const intent = intentFor(903, 900);

    expect(await deliver('payment_intent.succeeded', providers.stripe.succeed(intent.id))).toBe(200);

    const order = providers.woo.get(903);
    expect(order.status).toBe('processing');
    expect(order.date_paid).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(providers.orderUpdates(903)).toHaveLength(1);
    expect(providers.woo.phpNotices()).toEqual([expect.stringContaining('"_date_paid"')]);
  });

  it('leaves the paid date of an order with a physical item to WooCommerce, which stamps it at processing: one write, no notice', async () => {
    providers.woo.seed({ id: 902, lines: [{ name: 'Brass gear set', total: '60.00' }, { name: 'E-book', total: '5.00', virtual: true, downloadable: true }] });
    const intent = intentFor(902, 6500);

    await deliver('payment_intent.succeeded', providers.stripe.succeed(intent.id));

    const order = providers.woo.get(902);
    expect(order.status).toBe('processing');
    expect(order.date_paid).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(providers.orderUpdates(902)).toHaveLength(1);
    expect(providers.woo.phpNotices()).toEqual([]);
  });
});

describe('coherent state after a card payment', () => {
  const billing = { first_name: 'Grace', last_name: 'Hopper', address_1: '1 Navy Yard', city: 'Arlington', country: 'US' };

  it('manual submission then card: the manual status says superseded and the awaiting-screenshot note is replaced', async () => {
    providers.woo.seed({ id: 911, lines: [{ total: '40.00' }], shipping_total: '5.00' });
    const submitted = await submitOrder(
      postJson('/api/submit-order', { token: await tokenFor(911), billing_address: billing, contact_info: { email: 'grace@example.com' } }),
    );
    expect(submitted.status).toBe(200);
    expect(valuesOf(911, '_manual_payment_status')).toEqual(['pending-screenshot']);
    expect(providers.woo.get(911).customer_note).toContain('awaiting manual payment');

    const intent = intentFor(911, 4500);
    expect(await deliver('payment_intent.succeeded', providers.stripe.succeed(intent.id))).toBe(200);

    const order = providers.woo.get(911);
    expect(order).toMatchObject({ status: 'processing', payment_method: 'cardprovider', customer_note: PAYMENT_RECEIVED_NOTE });
    expect(order.date_paid).not.toBeNull();
    // One entry, no longer claiming to await a screenshot.
    expect(valuesOf(911, '_manual_payment_status')).toEqual(['superseded']);
    // What the spec requires on success is all still written.
    const update = providers.orderUpdates(911).at(-1)!;
    const keys = (update.meta_data as { key: string }[]).map((m) => m.key);
    for (const key of ['_provider_payment_intent_id', '_provider_charge_id', '_paid_date']) {
      expect(keys).toContain(key);
    }
    // The spec's _payment_method, _payment_method_title and _transaction_id are the order's own properties.
    expect(update).toMatchObject({ payment_method: 'cardprovider', payment_method_title: 'Credit Card (cardprovider)', transaction_id: expect.any(String) });
    expect(valuesOf(911, '_provider_payment_intent_id')).toEqual([intent.id]);
  });

  it('failure then success: the failure note is replaced, the failure stays recorded in meta', async () => {
    providers.woo.seed({ id: 912, customer_id: 77, lines: [{ total: '20.00' }] });
    const intent = intentFor(912, 2000);

    expect(await deliver('payment_intent.payment_failed', providers.stripe.fail(intent.id, 'Your card was declined.'))).toBe(200);
    expect(providers.woo.get(912).customer_note).toBe(paymentFailedNote('Your card was declined.', true));

    expect(await deliver('payment_intent.succeeded', providers.stripe.succeed(intent.id))).toBe(200);

    const order = providers.woo.get(912);
    expect(order).toMatchObject({ status: 'processing', customer_note: PAYMENT_RECEIVED_NOTE });
    expect(order.date_paid).not.toBeNull();
    expect(valuesOf(912, '_payment_error')).toEqual(['Your card was declined.']);
    // Never submitted for manual payment: nothing to supersede.
    expect(valuesOf(912, '_manual_payment_status')).toEqual([]);
    expect(providers.woo.carts.get(77)).toEqual([]);
  });

  it('keeps a note the customer wrote at checkout', async () => {
    providers.woo.seed({ id: 913, lines: [{ total: '10.00' }], customer_note: 'Please leave it with the neighbour.' });
    const intent = intentFor(913, 1000);

    await deliver('payment_intent.succeeded', providers.stripe.succeed(intent.id));

    expect(providers.woo.get(913)).toMatchObject({ status: 'processing', customer_note: 'Please leave it with the neighbour.' });
    expect(providers.orderUpdates(913)[0]).not.toHaveProperty('customer_note');
  });
});
