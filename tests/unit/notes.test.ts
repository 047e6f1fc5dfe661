import { describe, expect, it } from 'vitest';
import { AMOUNT_MISMATCH_NOTE, isSupersededByPayment, manualPaymentAwaitedNote, paymentAuthorizedNote, paymentFailedNote, PAYMENT_RECEIVED_NOTE, shippedNote, shopNotes } from '@/lib/orders/notes';

describe('customer notes', () => {
  it('states the provider message once, with one full stop, and what happens next', () => {
    expect(paymentFailedNote('Your card was declined.', false)).toBe(
      'Your payment could not be completed: Your card was declined. Please try again or use another payment method.',
    );
    expect(paymentFailedNote('Unknown error', true)).toBe(
      'Your payment could not be completed: Unknown error. Your cart has been restored so you can try again.',
    );
  });

  it('tells the customer about a mismatch and to contact support', () => {
    expect(AMOUNT_MISMATCH_NOTE).toMatch(/does not match/);
    expect(AMOUNT_MISMATCH_NOTE).toMatch(/contact support/);
  });

  it('recognises the failure and manual-payment notes a card payment supersedes, and nothing a customer wrote', () => {
    expect(isSupersededByPayment(paymentFailedNote('Your card was declined.', true))).toBe(true);
    expect(isSupersededByPayment(manualPaymentAwaitedNote('Manual Payment (Zelle / Venmo)'))).toBe(true);
    expect(isSupersededByPayment('Please leave it with the neighbour.')).toBe(false);
    expect(isSupersededByPayment('')).toBe(false);
    expect(isSupersededByPayment(AMOUNT_MISMATCH_NOTE)).toBe(false);
    expect(isSupersededByPayment(PAYMENT_RECEIVED_NOTE)).toBe(false);
  });

  it('names the manual payment methods in the submitted note', () => {
    expect(manualPaymentAwaitedNote('Manual Payment (Zelle / Venmo)')).toContain('awaiting manual payment (Manual Payment (Zelle / Venmo))');
  });

  it('builds the shipped note from the present parts only, in order', () => {
    expect(shippedNote({})).toBe('Your order has been shipped!');
    expect(shippedNote({ trackingNumber: '1Z999', carrier: 'UPS', shipDate: '2026-11-20' })).toBe(
      'Your order has been shipped! Tracking Number: 1Z999 | Carrier: UPS | Ship Date: 2026-11-20',
    );
    expect(shippedNote({ carrier: 'USPS' })).toBe('Your order has been shipped! Carrier: USPS');
    expect(shippedNote({ trackingNumber: '9400', shipDate: '2026-11-21' })).toBe(
      'Your order has been shipped! Tracking Number: 9400 | Ship Date: 2026-11-21',
    );
  });
});

describe('the authorization note says what the capture mode does', () => {
  it('on_shipment: charged when the order ships; manual: charged once the shop confirms, never "when it ships"', () => {
    expect(paymentAuthorizedNote('on_shipment')).toMatch(/charged when your order ships\.$/);
    expect(paymentAuthorizedNote('manual')).not.toMatch(/ships/);
    expect(paymentAuthorizedNote('manual')).toMatch(/charged once we have confirmed your order\.$/);
  });

  it('either note is superseded by the payment-received note once the payment is recorded', () => {
    expect(isSupersededByPayment(paymentAuthorizedNote('on_shipment'))).toBe(true);
    expect(isSupersededByPayment(paymentAuthorizedNote('manual'))).toBe(true);
  });
});

describe('what a hold did to the order, in a shop note', () => {
  it('says put on hold, back to a status, still held by what, or unchanged', () => {
    expect(shopNotes.statusSentence('processing', 'on-hold', ['a Radar review'])).toBe('The order was put on hold (it was processing).');
    expect(shopNotes.statusSentence('on-hold', 'processing', [])).toBe('The order is back to processing.');
    expect(shopNotes.statusSentence('on-hold', 'on-hold', ['a dispute'])).toBe('The order stays on hold: a dispute still holds it.');
    expect(shopNotes.statusSentence('on-hold', 'on-hold', ['a Radar review', 'a dispute'])).toBe('The order stays on hold: a Radar review and a dispute still hold it.');
    expect(shopNotes.statusSentence('cancelled', 'cancelled', [])).toBe('The order stays cancelled.');
  });
});
