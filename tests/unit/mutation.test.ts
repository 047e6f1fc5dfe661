import { describe, expect, it } from 'vitest';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { appliedEventIds, hasReceipt, RECEIPTS_KEPT, receiptsWith } from '@/lib/orders/receipts';
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

describe('receipts on the order (DECISIONS 12)', () => {
  const receipted = (ids: string[]) =>
    storeOrderSchema.parse({
      ...order,
      meta_data: [...order.meta_data, { id: 3, key: '_cardprovider_event_ids', value: JSON.stringify(ids) }],
    });

  it('writes the event id with the change, after the appended entries, even when the change has no meta', () => {
    expect(buildOrderUpdate(order, { status: 'on-hold', customerNote: 'Held', receipt: 'evt_1' })).toEqual({
      status: 'on-hold',
      customer_note: 'Held',
      meta_data: [
        { id: 1, key: '_payment_intent_id', value: 'pi_old' },
        { id: 2, key: 'gift_wrap', value: 'yes' },
        { key: '_cardprovider_event_ids', value: '["evt_1"]' },
      ],
    });
    const appended = buildOrderUpdate(order, { meta: { _payment_error: 'Declined.' }, metaMode: 'append', receipt: 'evt_2' });
    expect(appended.meta_data?.slice(-2)).toEqual([
      { key: '_payment_error', value: 'Declined.' },
      { key: '_cardprovider_event_ids', value: '["evt_2"]' },
    ]);
  });

  it('adds to the receipts the order holds, in place (one entry for the key, its id kept)', () => {
    const update = buildOrderUpdate(receipted(['evt_1']), { status: 'processing', receipt: 'evt_2' });
    expect(update.meta_data).toEqual([
      { id: 1, key: '_payment_intent_id', value: 'pi_old' },
      { id: 2, key: 'gift_wrap', value: 'yes' },
      { id: 3, key: '_cardprovider_event_ids', value: '["evt_1","evt_2"]' },
    ]);
  });

  it('reads the receipts back, and keeps the newest RECEIPTS_KEPT ids', () => {
    const ids = Array.from({ length: RECEIPTS_KEPT }, (_, i) => `evt_${i}`);
    const full = receipted(ids);
    expect(hasReceipt(full, 'evt_0')).toBe(true);
    expect(hasReceipt(full, 'evt_new')).toBe(false);
    const value = JSON.parse(receiptsWith(full, 'evt_new')) as string[];
    expect(value).toHaveLength(RECEIPTS_KEPT);
    expect(value[0]).toBe('evt_1');
    expect(value.at(-1)).toBe('evt_new');
  });

  it('treats an unreadable receipts value as none, never as a receipt', () => {
    const garbled = storeOrderSchema.parse({ ...order, meta_data: [{ key: '_cardprovider_event_ids', value: 'evt_1,evt_2' }] });
    expect(appliedEventIds(garbled)).toEqual([]);
    expect(hasReceipt(garbled, 'evt_1')).toBe(false);
  });
});
