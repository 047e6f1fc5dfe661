/** When a card payment sends `_date_paid`: only when WooCommerce will not stamp the paid date itself (docs/decisions.md#d14). */
import { describe, expect, it } from 'vitest';
import { storeStampsPaidDate } from '@/lib/card-payments/payment';

const pending = { status: 'pending', date_paid: null, needs_processing: true };
const ebooks = { ...pending, needs_processing: false };

describe('whether the store stamps the paid date of a payment write', () => {
  it('stamps it when the write reaches the payment-complete status (processing, or completed for e-books only)', () => {
    expect(storeStampsPaidDate(pending, 'processing')).toBe(true);
    expect(storeStampsPaidDate(pending, 'completed')).toBe(true);
    expect(storeStampsPaidDate(ebooks, 'completed')).toBe(true);
  });

  it('does not for e-books set to processing, for a status kept (held, shipped), or when the store does not say', () => {
    expect(storeStampsPaidDate(ebooks, 'processing')).toBe(false);
    expect(storeStampsPaidDate({ ...pending, status: 'on-hold' }, undefined)).toBe(false);
    expect(storeStampsPaidDate({ ...pending, status: 'completed' }, 'completed')).toBe(false);
    expect(storeStampsPaidDate({ ...pending, needs_processing: undefined }, 'processing')).toBe(false);
  });

  it('leaves a paid date the order already has', () => {
    expect(storeStampsPaidDate({ ...ebooks, date_paid: '2026-11-26T12:00:00' }, 'processing')).toBe(true);
  });
});
