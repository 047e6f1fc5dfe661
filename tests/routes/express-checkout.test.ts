import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingRate } from '@/app/api/express-checkout/shipping-rate/route';
import { POST as shippingRates, OPTIONS } from '@/app/api/express-checkout/shipping-rates/route';
import { useTestEnv } from '../support/env';
import { expressShop } from '../support/express-shop';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  expressShop(providers);
});

const TORONTO = { country: 'CA', state: 'ON', postal_code: 'M5V 2T6', city: 'Toronto' };
const NEW_YORK = { country: 'US', state: 'NY', postal_code: '10001', city: 'New York' };
const SYDNEY = { country: 'AU', state: 'NSW', postal_code: '2000', city: 'Sydney' };

async function call(handler: (request: Request) => Promise<Response>, path: string, body: Record<string, unknown>) {
  const response = await handler(postJson(path, body));
  return { status: response.status, body: await response.json() };
}

const quote = async (orderId: number, address: Record<string, string>) =>
  call(shippingRates, '/api/express-checkout/shipping-rates', { token: await tokenFor(orderId), address });
const choose = async (orderId: number, rateId: string, address: Record<string, string>) =>
  call(shippingRate, '/api/express-checkout/shipping-rate', { token: await tokenFor(orderId), shipping_rate_id: rateId, address });

function intentOf(orderId: number) {
  return [...providers.stripe.intents.values()].find((intent) => intent.metadata.shop_order_id === String(orderId))!;
}

describe('POST /api/express-checkout/shipping-rates', () => {
  it('answers the store’s rates at several destinations, each with the order’s total there, and changes nothing', async () => {
    providers.woo.seed({ id: 801, currency: 'CAD', lines: [{ total: '20.00' }] });

    const toronto = await quote(801, TORONTO);
    expect(toronto).toEqual({
      status: 200,
      body: {
        success: true,
        currency: 'cad',
        shipping_rates: [
          {
            id: 'flat_rate:1',
            label: 'Flat rate',
            amount: 1130,
            total: 3390,
            line_items: [
              { name: 'Subtotal', amount: 2000 },
              { name: 'Shipping', amount: 1000 },
              { name: 'Tax', amount: 390 },
            ],
          },
        ],
      },
    });
    const newYork = await quote(801, NEW_YORK);
    expect(newYork.body.shipping_rates).toEqual([
      { id: 'flat_rate:2', label: 'Flat rate', amount: 1500, total: 3500, line_items: [{ name: 'Subtotal', amount: 2000 }, { name: 'Shipping', amount: 1500 }] },
    ]);

    expect(providers.orderUpdates(801)).toEqual([]);
    expect(providers.callsTo('card')).toEqual([]);
    expect(providers.callsTo('store', 'GET', /shipping-rates/)[0]!.path).toBe('/wp-json/wc-checkout-bridge/v1/orders/801/shipping-rates');
  });

  it('offers free shipping once the items reach the threshold, beside the flat rate', async () => {
    providers.woo.seed({ id: 802, currency: 'CAD', lines: [{ total: '60.00' }] });
    const { body } = await quote(802, TORONTO);
    expect(body.shipping_rates.map((rate: { id: string; amount: number; total: number }) => [rate.id, rate.amount, rate.total])).toEqual([
      ['flat_rate:1', 1130, 7910],
      ['free_shipping:3', 0, 6780],
    ]);
  });

  it('answers an empty list for a destination whose zone has no method', async () => {
    providers.woo.seed({ id: 803, currency: 'CAD', lines: [{ total: '20.00' }] });
    expect(await quote(803, SYDNEY)).toEqual({ status: 200, body: { success: true, currency: 'cad', shipping_rates: [] } });
  });

  it('adds a shipping class’s cost to the flat rate', async () => {
    providers.woo.seed({ id: 804, currency: 'CAD', lines: [{ total: '20.00', product_id: 777 }] });
    const { body } = await quote(804, TORONTO);
    expect(body.shipping_rates[0]).toMatchObject({ id: 'flat_rate:1', amount: 1695, total: 3955 });
  });

  it('refuses an address without a two-letter country with 400 and no store call', async () => {
    providers.woo.seed({ id: 805, currency: 'CAD' });
    const { status, body } = await quote(805, { country: 'Canada', city: 'Toronto' });
    expect(status).toBe(400);
    expect(body.details[0].path).toEqual(['address', 'country']);
    expect(providers.callsTo('store')).toEqual([]);
  });

  it('answers 400 for an order that is no longer pending', async () => {
    providers.woo.seed({ id: 806, currency: 'CAD', status: 'processing' });
    const { status, body } = await quote(806, TORONTO);
    expect(status).toBe(400);
    expect(body.error).toBe('Order cannot be paid');
  });

  it('answers the express-checkout 500 naming the store call when the companion plugin is older than the route', async () => {
    providers.woo.seed({ id: 808, currency: 'CAD' });
    providers.woo.cartBridgeInstalled = false;
    const { status, body } = await quote(808, TORONTO);
    expect(status).toBe(500);
    expect(body.error).toMatchObject({ code: 'EXPRESS_CHECKOUT_ERROR', message: expect.stringContaining('get shipping rates') });
  });

  it('refuses a bad token with the express-checkout error code and touches nothing', async () => {
    const { status, body } = await call(shippingRates, '/api/express-checkout/shipping-rates', { token: 'not-a-token', address: TORONTO });
    expect(status).toBe(500);
    expect(body.error.code).toBe('EXPRESS_CHECKOUT_ERROR');
    expect(providers.calls).toEqual([]);
  });

  it('refuses an origin that is not allowed, and answers the storefront’s preflight', async () => {
    providers.woo.seed({ id: 807, currency: 'CAD' });
    const response = await shippingRates(postJson('/api/express-checkout/shipping-rates', { token: await tokenFor(807), address: TORONTO }, { origin: 'https://evil.test' }));
    expect(response.status).toBe(500);
    expect(providers.calls).toEqual([]);
    const preflight = await OPTIONS(new Request('http://localhost:3000/api/express-checkout/shipping-rates', { method: 'OPTIONS', headers: { origin: 'https://storefront.test', 'access-control-request-method': 'POST' } }));
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://storefront.test');
  });
});

describe('POST /api/express-checkout/shipping-rate', () => {
  it('writes the rate and the address, WooCommerce recalculates, and the intent follows the new total', async () => {
    providers.woo.seed({ id: 811, currency: 'CAD', lines: [{ total: '20.00' }] });
    await call(paymentIntent, '/api/payment-intent', { token: await tokenFor(811) });
    expect(intentOf(811).amount).toBe(2000);

    const { status, body } = await choose(811, 'flat_rate:1', TORONTO);
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      currency: 'cad',
      total: 3390,
      shipping_rate: { id: 'flat_rate:1', label: 'Flat rate', amount: 1130 },
      line_items: [
        { name: 'Subtotal', amount: 2000 },
        { name: 'Shipping', amount: 1000 },
        { name: 'Tax', amount: 390 },
      ],
    });
    const order = providers.woo.get(811);
    expect(order.total).toBe('33.90');
    expect(order.shipping).toMatchObject({ country: 'CA', state: 'ON', postcode: 'M5V 2T6', city: 'Toronto' });
    expect(order.shipping_lines).toEqual([expect.objectContaining({ method_id: 'flat_rate', instance_id: '1', total: '10.00', total_tax: '1.30' })]);
    expect(intentOf(811).amount).toBe(3390);
    // Never the intent's own shipping: the wallet's confirmation sends it.
    for (const sent of providers.callsTo('card', 'POST')) expect(sent.body).not.toHaveProperty('shipping');
  });

  it('a rate chosen, then the address changed: the old rate is refused there, the new one replaces its line', async () => {
    providers.woo.seed({ id: 812, currency: 'CAD', lines: [{ total: '20.00' }] });
    await call(paymentIntent, '/api/payment-intent', { token: await tokenFor(812) });
    await choose(812, 'flat_rate:1', TORONTO);

    // The sheet's totals at the new address count the new rate instead of the line the order holds.
    const moved = await quote(812, NEW_YORK);
    expect(moved.body.shipping_rates).toEqual([expect.objectContaining({ id: 'flat_rate:2', total: 3500 })]);

    const stale = await choose(812, 'flat_rate:1', NEW_YORK);
    expect(stale.status).toBe(400);
    expect(stale.body.details).toEqual([expect.objectContaining({ path: ['shipping_rate_id'], message: 'is not offered at this address' })]);
    expect(intentOf(812).amount).toBe(3390);
    expect(providers.woo.get(812).total).toBe('33.90');

    const { body } = await choose(812, 'flat_rate:2', NEW_YORK);
    expect(body.total).toBe(3500);
    const order = providers.woo.get(812);
    expect(order.shipping_lines).toHaveLength(1);
    expect(order.shipping_lines[0]).toMatchObject({ method_id: 'flat_rate', instance_id: '2', total: '15.00', total_tax: '0.00' });
    expect(order).toMatchObject({ total: '35.00', total_tax: '0.00' });
    expect(intentOf(812).amount).toBe(3500);
  });

  it('clears the street of an earlier address, so the order never ships to a street in another city', async () => {
    providers.woo.seed({ id: 813, currency: 'CAD', lines: [{ total: '20.00' }], shipping: { address_1: '1 Old Street', city: 'Halifax', country: 'CA' } });
    await choose(813, 'flat_rate:2', NEW_YORK);
    expect(providers.woo.get(813).shipping).toMatchObject({ address_1: '', address_2: '', city: 'New York', country: 'US' });
  });

  it('writes the address as the store matched it, a state given by name as its code, so the taxes are the ones quoted', async () => {
    providers.woo.seed({ id: 816, currency: 'CAD', lines: [{ total: '20.00' }] });
    await choose(816, 'flat_rate:1', { country: 'ca', state: 'Ontario', postal_code: 'm5v 2t6', city: 'Toronto' });
    expect(providers.woo.get(816).shipping).toMatchObject({ country: 'CA', state: 'ON', postcode: 'M5V 2T6' });
  });

  it('writes the rate without an intent to follow when none exists yet', async () => {
    providers.woo.seed({ id: 814, currency: 'CAD', lines: [{ total: '60.00' }] });
    const { body } = await choose(814, 'free_shipping:3', TORONTO);
    expect(body.total).toBe(6780);
    expect(providers.callsTo('card')).toEqual([]);
  });

  it('refuses a rate no method offers at the address with 400, writing nothing', async () => {
    providers.woo.seed({ id: 815, currency: 'CAD', lines: [{ total: '20.00' }] });
    const { status } = await choose(815, 'flat_rate:1', SYDNEY);
    expect(status).toBe(400);
    expect(providers.orderUpdates(815)).toEqual([]);
  });
});
