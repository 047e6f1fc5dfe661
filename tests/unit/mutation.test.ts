import { describe, expect, it } from 'vitest';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { PAYMENT_RECEIVED_NOTE, paymentFailedNote, shippedNote } from '@/lib/orders/notes';
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

describe("the payment's own fields and the customer's own note", () => {
  it("writes the contract's _payment_method, _payment_method_title and _transaction_id as the order's properties, not meta", () => {
    const update = buildOrderUpdate(order, {
      meta: { _payment_method: 'manual', _payment_method_title: 'Manual Payment', _transaction_id: 'tx_1', _manual_payment_status: 'pending-screenshot' },
      metaMode: 'replace',
    });
    expect(update).toMatchObject({ payment_method: 'manual', payment_method_title: 'Manual Payment', transaction_id: 'tx_1' });
    expect(update.meta_data!.map((m) => m.key)).toEqual(['_payment_intent_id', 'gift_wrap', '_manual_payment_status']);
  });

  it('lets an explicit payment method win over the same meta key', () => {
    const update = buildOrderUpdate(order, { paymentMethod: { id: 'cardprovider', title: 'Card' }, meta: { _payment_method: 'manual' }, metaMode: 'append' });
    expect(update.payment_method).toBe('cardprovider');
  });

  const noted = (customer_note: string, meta: { key: string; value: string }[] = []) =>
    storeOrderSchema.parse({ id: 10, status: 'pending', currency: 'USD', customer_note, meta_data: meta });
  const kept = (update: ReturnType<typeof buildOrderUpdate>) => (update.meta_data ?? []).filter((m) => m.key === '_customer_note_at_checkout').map((m) => m.value);

  it("keeps the customer's note in the same update that replaces it", () => {
    const update = buildOrderUpdate(noted('Ring twice.'), { customerNote: PAYMENT_RECEIVED_NOTE });
    expect(update.customer_note).toBe(PAYMENT_RECEIVED_NOTE);
    expect(kept(update)).toEqual(['Ring twice.']);
  });

  it("never keeps the service's own message, nor over a note already kept, nor an unchanged note", () => {
    expect(kept(buildOrderUpdate(noted(paymentFailedNote('Declined.', false)), { customerNote: PAYMENT_RECEIVED_NOTE }))).toEqual([]);
    expect(kept(buildOrderUpdate(noted(shippedNote({})), { customerNote: PAYMENT_RECEIVED_NOTE }))).toEqual([]);
    const already = noted('A later edit', [{ key: '_customer_note_at_checkout', value: 'Ring twice.' }]);
    expect(buildOrderUpdate(already, { customerNote: PAYMENT_RECEIVED_NOTE }).meta_data).toBeUndefined();
    expect(kept(buildOrderUpdate(noted('Ring twice.'), { customerNote: 'Ring twice.' }))).toEqual([]);
    expect(kept(buildOrderUpdate(noted(''), { customerNote: PAYMENT_RECEIVED_NOTE }))).toEqual([]);
  });

  it('adds a line under the current note without keeping anything', () => {
    const update = buildOrderUpdate(noted('Ring twice.'), { customerNoteLine: 'Another package of your order has been shipped!' });
    expect(update.customer_note).toBe('Ring twice.\nAnother package of your order has been shipped!');
    expect(update.meta_data).toBeUndefined();
  });
});
