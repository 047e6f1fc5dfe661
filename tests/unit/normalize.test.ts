import { describe, expect, it } from 'vitest';
import { normalizeOrder } from '@/lib/orders/normalize';
import { isPaid, notPayableReason } from '@/lib/orders/order-payment';
import { storeOrderSchema } from '@/lib/store/types';
import { loggedLines } from '../support/setup';

function order(fields: Record<string, unknown>) {
  return storeOrderSchema.parse({ id: 7, status: 'pending', currency: 'USD', ...fields });
}

describe('normalized order', () => {
  it('computes total_cents from lines, fees, shipping and tax', () => {
    const normalized = normalizeOrder(
      order({
        line_items: [{ total: '0.10' }, { total: '0.20' }],
        fee_lines: [{ total: '1.05' }, { total: '-0.50' }],
        shipping_total: '4.35',
        total_tax: '0.66',
        total: '5.86',
        billing: { email: 'buyer@example.com' },
        meta_data: [{ id: 1, key: '_payment_intent_id', value: 'pi_123' }],
      }),
    );
    expect(normalized).toMatchObject({
      subtotal_cents: 30,
      fees_cents: 55,
      shipping_cost_cents: 435,
      tax_cents: 66,
      total_cents: 586,
      charge_cents: 586,
      currency: 'USD',
      email: 'buyer@example.com',
      payment_intent_id: 'pi_123',
    });
    expect(loggedLines().filter((l) => l.event === 'order.total_mismatch')).toHaveLength(0);
  });

  it('never charges the store total and logs both figures when it disagrees', () => {
    const normalized = normalizeOrder(order({ line_items: [{ total: '10.00' }], total: '9.99' }));
    expect(normalized.total_cents).toBe(1000);
    const warning = loggedLines().find((l) => l.event === 'order.total_mismatch');
    expect(warning).toMatchObject({ level: 'warn', orderId: 7, computedTotal: 1000, storeTotal: 999 });
  });

  it('uses whole yen for JPY orders and rounds KWD charges to 10 fils', () => {
    expect(normalizeOrder(order({ currency: 'JPY', line_items: [{ total: '1500' }], shipping_total: '300', total: '1800' })).total_cents).toBe(1800);
    const kwd = normalizeOrder(order({ currency: 'KWD', line_items: [{ total: '12.345' }], total: '12.345' }));
    expect(kwd.total_cents).toBe(12345);
    expect(kwd.charge_cents).toBe(12350);
  });

  it('has no payment intent id when the meta value is empty or not a string', () => {
    expect(normalizeOrder(order({ meta_data: [{ key: '_payment_intent_id', value: '' }] })).payment_intent_id).toBeUndefined();
    expect(normalizeOrder(order({ meta_data: [{ key: '_payment_intent_id', value: 5 }] })).payment_intent_id).toBeUndefined();
  });
});

describe('paid and payable', () => {
  it('is paid when date_paid is set or the status says so', () => {
    expect(isPaid({ status: 'pending', date_paid: '2026-01-01T00:00:00' })).toBe(true);
    for (const status of ['processing', 'completed', 'shipped', 'awaiting_shipment']) {
      expect(isPaid({ status, date_paid: null }), status).toBe(true);
    }
    for (const status of ['pending', 'on-hold', 'failed', 'cancelled']) {
      expect(isPaid({ status, date_paid: null }), status).toBe(false);
    }
  });

  it('can be paid only when pending and not paid, with the spec reasons otherwise', () => {
    expect(notPayableReason({ status: 'pending', date_paid: '2026-01-01T00:00:00' })).toBe('Order is already paid');
    expect(notPayableReason({ status: 'processing', date_paid: null })).toBe('Order is already paid');
    expect(notPayableReason({ status: 'on-hold', date_paid: null })).toBe('Order status is not pending');
    expect(notPayableReason({ status: 'pending', date_paid: null })).toBeUndefined();
  });
});
