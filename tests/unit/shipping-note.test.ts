import { describe, expect, it } from 'vitest';
import { shippedNote } from '@/lib/orders/notes';

describe('shipped customer note (spec 4.4)', () => {
  it.each([
    [{}, 'Your order has been shipped!'],
    [{ trackingNumber: 'T1', carrier: 'UPS', shipDate: '2026-05-01' }, 'Your order has been shipped! Tracking Number: T1 | Carrier: UPS | Ship Date: 2026-05-01'],
    [{ trackingNumber: 'T1' }, 'Your order has been shipped! Tracking Number: T1'],
    [{ carrier: 'UPS' }, 'Your order has been shipped! Carrier: UPS'],
    [{ shipDate: '2026-05-01' }, 'Your order has been shipped! Ship Date: 2026-05-01'],
    [{ trackingNumber: 'T1', shipDate: '2026-05-01' }, 'Your order has been shipped! Tracking Number: T1 | Ship Date: 2026-05-01'],
    [{ carrier: 'UPS', shipDate: '2026-05-01' }, 'Your order has been shipped! Carrier: UPS | Ship Date: 2026-05-01'],
    [{ trackingNumber: 'T1', carrier: 'UPS' }, 'Your order has been shipped! Tracking Number: T1 | Carrier: UPS'],
    [{ trackingNumber: '', carrier: undefined, shipDate: '' }, 'Your order has been shipped!'],
  ])('%j → %s', (details, note) => {
    expect(shippedNote(details)).toBe(note);
  });
});
