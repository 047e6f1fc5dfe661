import { describe, expect, it } from 'vitest';
import { chargeIdOf, paymentErrorMessageOf, readCardEvent, readPaymentIntent, shopOrderId } from '@/lib/card/events';
import { InvalidCardEventError, InvalidSignatureError } from '@/lib/errors';
import { signatureFrom } from '@/lib/webhooks/card/event';

describe('card event: the signature header', () => {
  it("reads Stripe's Stripe-Signature header", () => {
    expect(signatureFrom(new Headers({ 'Stripe-Signature': 't=1,v1=abc' }))).toBe('t=1,v1=abc');
  });

  it("reads the spec's cardprovider-signature header", () => {
    expect(signatureFrom(new Headers({ 'cardprovider-signature': 't=2,v1=def' }))).toBe('t=2,v1=def');
  });

  it('treats a missing or empty header as a missing signature', () => {
    for (const headers of [new Headers(), new Headers({ 'stripe-signature': '' })]) {
      expect(() => signatureFrom(headers)).toThrow(InvalidSignatureError);
      expect(() => signatureFrom(headers)).toThrow('Missing signature');
    }
  });
});

describe('card event: shop_order_id', () => {
  it.each([
    ['123', 123],
    ['1', 1],
    ['0042', 42],
  ])('reads %j as order %d', (raw, expected) => {
    expect(shopOrderId({ shop_order_id: raw })).toBe(expected);
  });

  it.each([
    ['missing', {}],
    ['null metadata', null],
    ['0', { shop_order_id: '0' }],
    ['000', { shop_order_id: '000' }],
    ['empty', { shop_order_id: '' }],
    ['negative', { shop_order_id: '-5' }],
    ['decimal', { shop_order_id: '5.0' }],
    ['trailing text', { shop_order_id: '5abc' }],
    ['padded', { shop_order_id: ' 5' }],
    ['a number, not a string', { shop_order_id: 5 }],
    ['exponent', { shop_order_id: '1e3' }],
    ['too long to be an id', { shop_order_id: '1234567890123456' }],
  ])('reads no order from %s', (_label, metadata) => {
    expect(shopOrderId(metadata as Record<string, unknown> | null)).toBeUndefined();
  });
});

describe('card event: the charge id', () => {
  it('is latest_charge when a string', () => expect(chargeIdOf('ch_1')).toBe('ch_1'));
  it("is the object's id when latest_charge is expanded", () => expect(chargeIdOf({ id: 'ch_2', amount: 5 })).toBe('ch_2'));
  it.each([null, undefined, 42, {}, { id: 7 }])('is empty for %j', (value) => expect(chargeIdOf(value)).toBe(''));
});

describe('card event: the payment error message', () => {
  it("is the provider's message", () => {
    expect(paymentErrorMessageOf({ code: 'card_declined', message: 'Your card was declined.' })).toBe('Your card was declined.');
  });
  it.each([null, undefined, {}, { message: '' }, { message: '   ' }, { message: 5 }, 'text'])(
    'is Unknown error for %j',
    (value) => expect(paymentErrorMessageOf(value)).toBe('Unknown error'),
  );
  it('is bounded in length', () => {
    expect(paymentErrorMessageOf({ message: 'x'.repeat(2000) })).toHaveLength(500);
  });
});

describe('card event: the envelope and the payment intent', () => {
  it('reads the id, type and data object of an event', () => {
    const object = { id: 'pi_1', amount: 100 };
    expect(readCardEvent({ id: 'evt_1', type: 'payment_intent.succeeded', created: 1_700_000_000, data: { object } })).toEqual({
      id: 'evt_1',
      type: 'payment_intent.succeeded',
      created: 1_700_000_000,
      object,
    });
  });

  it.each([null, 5, 'evt', {}, { id: 'evt_1', type: 'x' }, { id: '', type: 'x', data: { object: {} } }, { id: 'e', type: 'x', data: { object: null } }])(
    'refuses %j as an event',
    (value) => {
      expect(() => readCardEvent(value)).toThrow(InvalidCardEventError);
    },
  );

  it('reads the facts the webhook uses from a payment intent', () => {
    expect(
      readPaymentIntent({
        id: 'pi_1',
        object: 'payment_intent',
        amount: 2129,
        currency: 'USD',
        metadata: { shop_order_id: '101', other: 'x' },
        latest_charge: { id: 'ch_1' },
        last_payment_error: { message: 'Declined' },
      }),
    ).toEqual({ intentId: 'pi_1', amount: 2129, currency: 'usd', orderId: 101, chargeId: 'ch_1', errorMessage: 'Declined' });
  });

  it("compares what an automatic capture charged, the intent's amount, as the spec says", () => {
    const intent = { id: 'pi_1', status: 'succeeded', capture_method: 'automatic_async', amount: 1500, amount_received: 2000 };
    expect(readPaymentIntent(intent).amount).toBe(1500);
  });

  it('reads what a manual capture received, which may be less than was authorized', () => {
    const intent = { id: 'pi_1', status: 'succeeded', capture_method: 'manual', amount: 2000, amount_received: 1500 };
    expect(readPaymentIntent(intent).amount).toBe(1500);
  });

  it('leaves a missing amount undefined for the handler to refuse', () => {
    expect(readPaymentIntent({ id: 'pi_1', metadata: {} })).toMatchObject({ amount: undefined, orderId: undefined, chargeId: '' });
  });

  it.each([{}, { id: 5 }, { id: 'pi_1', amount: -1 }, { id: 'pi_1', amount: 10.5 }, { id: 'pi_1', amount: '100' }])(
    'refuses %j as a payment intent',
    (value) => {
      expect(() => readPaymentIntent(value as Record<string, unknown>)).toThrow(InvalidCardEventError);
    },
  );
});
