import { describe, expect, it } from 'vitest';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { storeOrderSchema } from '@/lib/store/types';

const order = storeOrderSchema.parse({
  id: 9,
  status: 'pending',
  currency: 'USD',
  meta_data: [
    { id: 1, key: '_payment_intent_id', value: 'pi_old' },
    { id: 2, key: 'gift_wrap', value: 'yes' },
  ],
});

describe('order-mutation helper', () => {
  it('replaces meta by key for checkout writes, keeping one entry per key', () => {
    const update = buildOrderUpdate(order, {
      meta: { _payment_intent_id: 'pi_new', _checkout_address_updated: '2026-11-22T00:00:00.000Z' },
      metaMode: 'replace',
    });
    expect(update.meta_data).toEqual([
      { id: 1, key: '_payment_intent_id', value: 'pi_new' },
      { id: 2, key: 'gift_wrap', value: 'yes' },
      { key: '_checkout_address_updated', value: '2026-11-22T00:00:00.000Z' },
    ]);
  });

  it('appends meta for webhook writes after the existing entries', () => {
    const update = buildOrderUpdate(order, { meta: { _tracking_number: '1Z' }, metaMode: 'append' });
    expect(update.meta_data).toEqual([
      { id: 1, key: '_payment_intent_id', value: 'pi_old' },
      { id: 2, key: 'gift_wrap', value: 'yes' },
      { key: '_tracking_number', value: '1Z' },
    ]);
  });

  it('refuses meta without saying how to write it', () => {
    expect(() => buildOrderUpdate(order, { meta: { a: 'b' } })).toThrow(TypeError);
  });

  it('whitelists address fields and keeps email out of shipping', () => {
    const update = buildOrderUpdate(order, {
      billing: { first_name: 'Ada', email: 'ada@example.com', ...({ status: 'completed', id: 1 } as object) },
      shipping: { city: 'Berlin', email: 'ada@example.com', phone: '123' },
    });
    expect(update.billing).toEqual({ first_name: 'Ada', email: 'ada@example.com' });
    expect(update.shipping).toEqual({ city: 'Berlin', phone: '123' });
    expect(update).not.toHaveProperty('status');
  });

  it('writes status, note, payment method, paid dates and a registered customer', () => {
    const update = buildOrderUpdate(order, {
      status: 'processing',
      customerNote: 'Thanks',
      paymentMethod: { id: 'stripe', title: 'Credit Card (Stripe)', transactionId: 'ch_1' },
      datePaid: '2026-11-22T10:00:00.000Z',
      customerId: 12,
    });
    expect(update).toEqual({
      status: 'processing',
      customer_note: 'Thanks',
      payment_method: 'stripe',
      payment_method_title: 'Credit Card (Stripe)',
      transaction_id: 'ch_1',
      date_paid: '2026-11-22T10:00:00.000Z',
      date_paid_gmt: '2026-11-22T10:00:00.000Z',
      customer_id: 12,
    });
    expect(buildOrderUpdate(order, { customerId: 0 })).toEqual({});
  });
});


describe('order-mutation helper: the shipping line', () => {
  const line = { methodId: 'flat_rate', instanceId: 2, title: 'Flat rate', total: '15.00' };

  it('rewrites the order’s first shipping line and removes any other, so the order keeps one', () => {
    const withTwo = storeOrderSchema.parse({ id: 9, status: 'pending', currency: 'USD', shipping_lines: [{ id: 41, method_id: 'flat_rate', total: '10.00' }, { id: 42, method_id: 'local_pickup', total: '0.00' }] });
    expect(buildOrderUpdate(withTwo, { shippingLine: line }).shipping_lines).toEqual([
      { id: 41, method_id: 'flat_rate', method_title: 'Flat rate', instance_id: '2', total: '15.00' },
      { id: 42, method_id: null },
    ]);
  });

  it('adds the line to an order without one', () => {
    expect(buildOrderUpdate(order, { shippingLine: line }).shipping_lines).toEqual([{ method_id: 'flat_rate', method_title: 'Flat rate', instance_id: '2', total: '15.00' }]);
  });
});
