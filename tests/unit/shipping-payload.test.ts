import { describe, expect, it } from 'vitest';
import { parseOrderNumber } from '@/lib/shipments/mark-shipped';
import { parseShippingPayload } from '@/lib/webhooks/shipping/payload';

describe('order number (DECISIONS 11)', () => {
  it.each([
    ['1', 1],
    ['101', 101],
    ['0042', 42],
    ['999999999999999', 999_999_999_999_999],
  ])('%s names order %i', (value, orderId) => {
    expect(parseOrderNumber(value)).toBe(orderId);
  });

  it.each([undefined, null, '', '0', '000', '-1', '+1', '1.0', '1e3', ' 1', '1 ', '12a', 'WEB-1', '١٢', '1234567890123456', 12, true, {}])(
    '%j is not a number',
    (value) => {
      expect(parseOrderNumber(value)).toBeUndefined();
    },
  );
});

describe('shipping payload', () => {
  it('keeps the used fields and treats blank details as absent', () => {
    const result = parseShippingPayload(
      JSON.stringify({ resource_type: 'SHIP_NOTIFY', order_number: '5', tracking_number: ' T1 ', carrier: '', ship_date: null, extra: 1 }),
    );
    expect(result).toEqual({
      valid: true,
      payload: { resource_type: 'SHIP_NOTIFY', order_number: '5', tracking_number: 'T1', carrier: undefined, ship_date: undefined },
    });
  });

  it('accepts a real ShipStation body', () => {
    const result = parseShippingPayload(
      '{"resource_url":"https://ssapi.shipstation.com/shipments?storeID=1&batchId=2&includeShipmentItems=False","resource_type":"SHIP_NOTIFY"}',
    );
    expect(result.valid && result.payload.resource_url).toBe(
      'https://ssapi.shipstation.com/shipments?storeID=1&batchId=2&includeShipmentItems=False',
    );
  });

  it.each([
    ['not JSON', 'nope', 'json'],
    ['null', 'null', 'schema'],
    ['an array', '[]', 'schema'],
    ['an empty resource_type', '{"resource_type":""}', 'schema'],
    ['a numeric carrier', '{"resource_type":"SHIP_NOTIFY","carrier":5}', 'schema'],
    ['an object resource_url', '{"resource_type":"SHIP_NOTIFY","resource_url":{}}', 'schema'],
  ])('%s is invalid', (_label, body, reason) => {
    expect(parseShippingPayload(body)).toMatchObject({ valid: false, reason });
  });
});
