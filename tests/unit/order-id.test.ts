import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { shopOrderId } from '@/lib/card/events';
import { InvalidTokenError } from '@/lib/errors';
import { parseOrderId } from '@/lib/order-id';
import { mintCheckoutToken, verifyCheckoutToken } from '@/lib/security/checkout-token';
import { parseOrderNumber } from '@/lib/shipments/mark-shipped';

const FIFTEEN = '123456789012345';
const SIXTEEN = '1234567890123456';

describe('parseOrderId: the one reading of an order id given as text', () => {
  it.each([
    ['1', 1],
    ['42', 42],
    [FIFTEEN, 123_456_789_012_345],
    ['999999999999999', 999_999_999_999_999],
  ])('reads %s', (text, id) => {
    expect(parseOrderId(text)).toBe(id);
    expect(parseOrderId(text, 'zero_padded')).toBe(id);
  });

  it.each(['0', '01', '007', SIXTEEN, '9007199254740993', '', '-1', '+1', '1.0', '1e3', ' 1', '1 ', '12a', '١٢'])(
    'refuses %j as the service writes ids',
    (text) => {
      expect(parseOrderId(text)).toBeUndefined();
    },
  );

  it('reads a zero-padded id where others write it, the padding counting towards fifteen characters', () => {
    expect(parseOrderId('01', 'zero_padded')).toBe(1);
    expect(parseOrderId('0042', 'zero_padded')).toBe(42);
    expect(parseOrderId('00000000000042', 'zero_padded')).toBe(42);
    for (const text of ['0', '000', `0${FIFTEEN}`, '0000000000000042', '0x2a', '-042']) {
      expect(parseOrderId(text, 'zero_padded'), text).toBeUndefined();
    }
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 12, 12n, true, {}, ['1']]) expect(parseOrderId(value)).toBeUndefined();
  });

  it('is what the card metadata and the shipment order number read', () => {
    for (const text of ['0', '01', FIFTEEN, SIXTEEN]) {
      expect(shopOrderId({ shop_order_id: text }), text).toBe(parseOrderId(text, 'zero_padded'));
      expect(parseOrderNumber(text), text).toBe(parseOrderId(text, 'zero_padded'));
    }
  });
});

describe('the checkout token reads its subject with parseOrderId', () => {
  const secret = 'unit-test-secret-that-is-long-enough-0123';
  const signed = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('10m').sign(new TextEncoder().encode(secret));

  it('accepts fifteen digits and refuses sixteen, a leading zero, or 0', async () => {
    await expect(verifyCheckoutToken(await signed(FIFTEEN), { secret })).resolves.toBe(123_456_789_012_345);
    for (const sub of [SIXTEEN, '01', '0']) {
      await expect(verifyCheckoutToken(await signed(sub), { secret }), sub).rejects.toBeInstanceOf(InvalidTokenError);
    }
  });

  it('mints only for an id its verification reads back', async () => {
    await expect(verifyCheckoutToken(await mintCheckoutToken(999_999_999_999_999, { secret }), { secret })).resolves.toBe(999_999_999_999_999);
    await expect(mintCheckoutToken(1_234_567_890_123_456, { secret })).rejects.toThrow('at most 15 digits');
    await expect(mintCheckoutToken(0, { secret })).rejects.toThrow();
  });
});
