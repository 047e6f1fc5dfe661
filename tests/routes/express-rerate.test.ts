import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingRate } from '@/app/api/express-checkout/shipping-rate/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { normalizeOrder } from '@/lib/orders/normalize';
import { storeOrderSchema } from '@/lib/store/types';
import { configureShipping } from '@/stand-ins/woocommerce/shipping-zones';
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
const full = (at: { country: string; state: string; postal_code: string; city: string }) => ({
  first_name: 'Ada',
  last_name: 'Lovelace',
  address_1: '1 Main St',
  city: at.city,
  state: at.state,
  postcode: at.postal_code,
  country: at.country,
});
const TORONTO_CARD = full(TORONTO);
const VANCOUVER_CARD = full({ country: 'CA', state: 'BC', postal_code: 'V6B 1A1', city: 'Vancouver' });
const NEW_YORK_CARD = full({ country: 'US', state: 'NY', postal_code: '10001', city: 'New York' });

async function call(handler: (request: Request) => Promise<Response>, path: string, body: Record<string, unknown>) {
  const response = await handler(postJson(path, body));
  return { status: response.status, body: await response.json() };
}
const pay = async (orderId: number, body: Record<string, unknown> = {}) => call(paymentIntent, '/api/payment-intent', { token: await tokenFor(orderId), ...body });
const submit = async (orderId: number, body: Record<string, unknown>) => call(submitOrder, '/api/submit-order', { token: await tokenFor(orderId), ...body });
const choose = async (orderId: number, rateId: string, address: Record<string, string>) =>
  call(shippingRate, '/api/express-checkout/shipping-rate', { token: await tokenFor(orderId), shipping_rate_id: rateId, address });

const intentOf = (orderId: number) => [...providers.stripe.intents.values()].find((intent) => intent.metadata.shop_order_id === String(orderId))!;
const orderCents = (orderId: number) => normalizeOrder(storeOrderSchema.parse(providers.woo.get(orderId))).charge_cents;
const quotesSince = (before: number) => providers.callsTo('store', 'GET', /shipping-rates/).length - before;
const quotes = () => quotesSince(0);
const expressMeta = (orderId: number) => providers.woo.get(orderId).meta_data.find((m) => m.key === '_express_shipping_destination')?.value;

/** Free shipping chosen in the wallet at a Canadian address, the order's intent following it. */
async function freeShippingChosenInToronto(orderId: number) {
  providers.woo.seed({ id: orderId, currency: 'CAD', lines: [{ total: '60.00' }] });
  await pay(orderId);
  expect((await choose(orderId, 'free_shipping:3', TORONTO)).body.total).toBe(6780);
  return { updates: providers.orderUpdates(orderId).length, order: providers.woo.get(orderId) };
}

describe('a wallet’s shipping rate, then another destination on payment', () => {
  it('remembers where the chosen rate was quoted, in the update that writes the line', async () => {
    providers.woo.seed({ id: 851, currency: 'CAD', lines: [{ total: '20.00' }] });
    await choose(851, 'flat_rate:1', { ...TORONTO, state: 'Ontario' });
    expect(JSON.parse(String(expressMeta(851)))).toEqual({ rate_id: 'flat_rate:1', country: 'CA', state: 'ON', postcode: 'M5V 2T6', city: 'Toronto' });
  });

  it('refuses a card-form address in a zone without the chosen rate with 400 on shipping_address, writing nothing', async () => {
    const before = await freeShippingChosenInToronto(852);
    const { status, body } = await pay(852, { billing_address: NEW_YORK_CARD, shipping_address: NEW_YORK_CARD });
    expect(status).toBe(400);
    expect(body.details).toEqual([
      expect.objectContaining({ path: ['shipping_address'], message: 'the chosen shipping rate is not available at this address: choose a shipping rate again' }),
    ]);
    expect(providers.orderUpdates(852)).toHaveLength(before.updates);
    expect(providers.woo.get(852)).toEqual(before.order);
    expect(intentOf(852).amount).toBe(6780);
  });

  it('refuses a billing address shipped to (shipping_address null) in a zone without the chosen rate', async () => {
    const before = await freeShippingChosenInToronto(853);
    const { status, body } = await pay(853, { billing_address: NEW_YORK_CARD, shipping_address: null });
    expect(status).toBe(400);
    expect(body.details[0].path).toEqual(['shipping_address']);
    expect(providers.orderUpdates(853)).toHaveLength(before.updates);
  });

  it('re-prices the chosen rate at the new address in the same order update, and the intent follows the order’s total', async () => {
    providers.woo.seed({ id: 854, currency: 'CAD', lines: [{ total: '20.00' }] });
    await pay(854);
    await choose(854, 'flat_rate:1', TORONTO);
    // The shop's price for the method is no longer the one quoted: the line must take the store's price now.
    configureShipping(providers.woo, {
      zones: [{ name: 'Canada', locations: [{ type: 'country', code: 'CA' }], methods: [{ type: 'flat_rate', instanceId: 1, cost: '12.00' }] }],
      restOfWorld: [{ type: 'flat_rate', instanceId: 2, cost: '15.00' }],
    });
    const updates = providers.orderUpdates(854).length;

    expect((await pay(854, { billing_address: VANCOUVER_CARD, shipping_address: VANCOUVER_CARD })).status).toBe(200);
    const written = providers.orderUpdates(854).slice(updates);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ shipping: { city: 'Vancouver' }, shipping_lines: [expect.objectContaining({ method_id: 'flat_rate', instance_id: '1', total: '12.00' })] });
    const order = providers.woo.get(854);
    expect(order.shipping_lines).toEqual([expect.objectContaining({ method_id: 'flat_rate', instance_id: '1', total: '12.00' })]);
    expect(JSON.parse(String(expressMeta(854)))).toMatchObject({ rate_id: 'flat_rate:1', state: 'BC', city: 'Vancouver' });
    expect(intentOf(854).amount).toBe(orderCents(854));
    expect(orderCents(854)).toBe(3616);
  });

  it('asks the store nothing more when the address paid with is where the rate was quoted (postcode spacing and case aside)', async () => {
    providers.woo.seed({ id: 855, currency: 'CAD', lines: [{ total: '20.00' }] });
    await choose(855, 'flat_rate:1', TORONTO);
    const before = quotes();
    const card = { ...TORONTO_CARD, postcode: 'm5v2t6', city: 'TORONTO' };
    expect((await pay(855, { billing_address: card, shipping_address: card })).status).toBe(200);
    expect(quotesSince(before)).toBe(0);
    expect(intentOf(855).amount).toBe(orderCents(855));
  });

  it('leaves a shipping line the storefront set untouched, without asking the store for rates', async () => {
    providers.woo.seed({ id: 856, currency: 'CAD', lines: [{ total: '20.00' }] });
    providers.woo.update(856, { shipping_lines: [{ method_id: 'free_shipping', instance_id: '3', method_title: 'Free shipping', total: '0.00' }] });
    expect((await pay(856, { billing_address: NEW_YORK_CARD, shipping_address: NEW_YORK_CARD })).status).toBe(200);
    expect(quotes()).toBe(0);
    expect(providers.woo.get(856).shipping_lines).toEqual([expect.objectContaining({ method_id: 'free_shipping', total: '0.00' })]);
    expect(intentOf(856).amount).toBe(orderCents(856));
  });

  it('submit-order refuses a billing address (shipped to) in a zone without the chosen rate, writing nothing, not even the customer note', async () => {
    useTestEnv({ CUSTOMER_MESSAGES: 'order_notes' });
    expressShop(providers);
    const before = await freeShippingChosenInToronto(857);
    const { status, body } = await submit(857, { billing_address: NEW_YORK_CARD });
    expect(status).toBe(400);
    expect(body.details[0]).toMatchObject({ path: ['shipping_address'], message: expect.stringContaining('choose a shipping rate again') });
    expect(providers.orderUpdates(857)).toHaveLength(before.updates);
    expect(providers.callsTo('store', 'POST', /notes/)).toEqual([]);
    expect(providers.woo.get(857)).toEqual(before.order);
  });

  it('submit-order re-prices the chosen rate at the new address and answers the order’s total with it', async () => {
    providers.woo.seed({ id: 858, currency: 'CAD', lines: [{ total: '20.00' }] });
    await choose(858, 'flat_rate:1', TORONTO);
    configureShipping(providers.woo, {
      zones: [{ name: 'Canada', locations: [{ type: 'country', code: 'CA' }], methods: [{ type: 'flat_rate', instanceId: 1, cost: '12.00' }] }],
      restOfWorld: [],
    });
    const { status, body } = await submit(858, { billing_address: VANCOUVER_CARD, shipping_address: VANCOUVER_CARD });
    expect(status).toBe(200);
    expect(providers.woo.get(858).shipping_lines).toEqual([expect.objectContaining({ instance_id: '1', total: '12.00' })]);
    expect(body.total).toBe(normalizeOrder(storeOrderSchema.parse(providers.woo.get(858))).total_cents);
    expect(body.total).toBe(3616);
  });
});
