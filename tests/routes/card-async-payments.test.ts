/**
 * CARD_LIFECYCLE_EVENTS=async (docs/decisions.md#d24): a delayed payment method (a bank
 * debit) in `processing` at Stripe puts its pending order on hold until the
 * money arrives or fails.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { PAYMENT_PROCESSING_NOTE, PAYMENT_RECEIVED_NOTE } from '@/lib/orders/notes';
import type { StripeIntent } from '@/stand-ins/stripe/objects';
import { deliverEvent } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CARD_LIFECYCLE_EVENTS: 'async' });
  providers.reset();
});

function sepaIntent(orderId: number): StripeIntent {
  providers.woo.seed({ id: orderId, currency: 'EUR', lines: [{ total: '30.00' }] });
  return providers.stripe.create({ amount: '3000', currency: 'eur', metadata: { shop_order_id: String(orderId) }, allowed_payment_method_types: { 0: 'sepa_debit' } });
}

const lastEvent = () => providers.stripe.events.events.at(-1)!;
const metaKeys = (orderId: number) => providers.woo.get(orderId).meta_data.map((m) => m.key);

describe('payment_intent.processing', () => {
  it('puts a pending order on hold with a customer note, and the later success takes it to processing', async () => {
    const intent = sepaIntent(1401);
    providers.stripe.process(intent.id);
    expect((await deliverEvent(lastEvent())).status).toBe(200);

    const held = providers.woo.get(1401);
    expect(held.status).toBe('on-hold');
    expect(held.customer_note).toBe(PAYMENT_PROCESSING_NOTE);
    expect(metaKeys(1401)).toContain('_payment_processing_at');
    expect(held.date_paid).toBeNull();

    providers.stripe.succeed(intent.id);
    expect((await deliverEvent(lastEvent())).status).toBe(200);
    const paid = providers.woo.get(1401);
    expect(paid.status).toBe('processing');
    expect(paid.customer_note).toBe(PAYMENT_RECEIVED_NOTE);
    expect(paid.payment_method_title).toBe('SEPA Direct Debit');
  });

  it('returns the order to pending with the failure note and meta when the debit fails', async () => {
    const intent = sepaIntent(1402);
    providers.stripe.process(intent.id);
    expect((await deliverEvent(lastEvent())).status).toBe(200);

    providers.stripe.fail(intent.id, 'The bank account has insufficient funds.');
    expect((await deliverEvent(lastEvent())).status).toBe(200);

    const order = providers.woo.get(1402);
    expect(order.status).toBe('pending');
    expect(order.customer_note).toMatch(/^Your payment could not be completed: The bank account has insufficient funds\./);
    expect(metaKeys(1402)).toEqual(expect.arrayContaining(['_payment_failed_at', '_payment_error', '_cart_restored_on_failure']));
  });

  it('ends right when the processing event arrives after the success or after the failure', async () => {
    const paidFirst = sepaIntent(1403);
    providers.stripe.process(paidFirst.id);
    const processing = lastEvent();
    providers.stripe.succeed(paidFirst.id);
    expect((await deliverEvent(lastEvent())).status).toBe(200);
    expect((await deliverEvent(processing)).status).toBe(200);
    expect(providers.woo.get(1403).status).toBe('processing');

    const failedFirst = sepaIntent(1404);
    providers.stripe.process(failedFirst.id);
    const late = { ...lastEvent(), created: Math.floor(Date.now() / 1000) - 60 };
    providers.stripe.fail(failedFirst.id);
    expect((await deliverEvent(lastEvent())).status).toBe(200);
    expect((await deliverEvent(late)).status).toBe(200);
    expect(providers.woo.get(1404).status).toBe('pending');
  });

  it('is acknowledged and changes nothing with CARD_LIFECYCLE_EVENTS empty', async () => {
    useTestEnv();
    const intent = sepaIntent(1405);
    providers.stripe.process(intent.id);
    expect(await deliverEvent(lastEvent())).toEqual({ status: 200, body: { received: true } });
    expect(providers.woo.get(1405).status).toBe('pending');
    expect(providers.callsTo('store')).toEqual([]);
  });
});
