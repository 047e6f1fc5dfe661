/** The WooCommerce stand-in's shipping, as the real 10.0.2 store with the companion plugin 1.4.0 answered. */
import { describe, expect, it } from 'vitest';
import { wooCommerceApiHandler } from '@/stand-ins/woocommerce/fetch-handler';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import { configureShipping } from '@/stand-ins/woocommerce/shipping-zones';

function shop() {
  const model = new WooCommerceModel({ taxRates: { CA: 13 } });
  configureShipping(model, {
    zones: [
      { name: 'Toronto downtown', locations: [{ type: 'state', code: 'CA:ON' }, { type: 'postcode', code: 'M5V*' }], methods: [] },
      { name: 'Canada', locations: [{ type: 'country', code: 'CA' }], methods: [{ type: 'flat_rate', instanceId: 1, cost: '10.00' }, { type: 'free_shipping', instanceId: 3, minAmount: '50' }] },
    ],
    restOfWorld: [{ type: 'flat_rate', instanceId: 2, cost: '15.00' }],
  });
  const api = wooCommerceApiHandler(model, { consumerKey: 'ck', consumerSecret: 'cs' });
  const auth = { authorization: `Basic ${Buffer.from('ck:cs').toString('base64')}` };
  const get = async (path: string) => {
    const response = await api(new Request(`https://shop.test/wp-json${path}`, { headers: auth }));
    return { status: response.status, body: await response.json() };
  };
  const put = async (id: number, body: unknown) => {
    const response = await api(new Request(`https://shop.test/wp-json/wc/v3/orders/${id}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    return { status: response.status, body: await response.json() };
  };
  return { model, get, put };
}

describe('the stand-in’s shipping-rates route', () => {
  it('answers the rates of the first matching zone, with taxes at the destination, as the real store did', async () => {
    const { model, get } = shop();
    model.seed({ id: 12, currency: 'CAD', lines: [{ total: '20.00' }] });
    const { status, body } = await get('/wc-checkout-bridge/v1/orders/12/shipping-rates?country=ca&state=Ontario&postcode=K1A%200B1&city=Ottawa');
    expect(status).toBe(200);
    expect(body).toEqual({
      rates: [{ id: 'flat_rate:1', method_id: 'flat_rate', instance_id: 1, label: 'Flat rate', total: '10.00', total_tax: '1.30' }],
      cart_tax: '2.60',
      destination: { country: 'CA', state: 'ON', postcode: 'K1A 0B1', city: 'Ottawa' },
    });
    expect(model.get(12).shipping_lines).toEqual([]);
  });

  it('matches zones in the shop’s order, one narrowed to postcodes only inside them (a zone with no method serves nothing)', async () => {
    const { model, get } = shop();
    model.seed({ id: 13, currency: 'CAD', lines: [{ total: '20.00' }] });
    expect((await get('/wc-checkout-bridge/v1/orders/13/shipping-rates?country=CA&state=ON&postcode=M5V%202T6')).body.rates).toEqual([]);
    expect((await get('/wc-checkout-bridge/v1/orders/13/shipping-rates?country=CA&state=ON&postcode=M4C%201A1')).body.rates).toHaveLength(1);
  });

  it('answers 404 for an unknown order and 400 for a missing or malformed country, as register_rest_route validates', async () => {
    const { get } = shop();
    expect(await get('/wc-checkout-bridge/v1/orders/999/shipping-rates?country=CA')).toMatchObject({ status: 404, body: { code: 'checkout_bridge_order_not_found' } });
    expect(await get('/wc-checkout-bridge/v1/orders/999/shipping-rates')).toMatchObject({ status: 400, body: { code: 'rest_missing_callback_param' } });
    expect(await get('/wc-checkout-bridge/v1/orders/999/shipping-rates?country=Canada')).toMatchObject({ status: 400, body: { code: 'rest_invalid_param' } });
  });
});

describe('the stand-in’s shipping_lines writes', () => {
  it('adds, updates and removes lines as the REST controller does, recalculating totals and taxes', async () => {
    const { model, put } = shop();
    model.seed({ id: 21, currency: 'CAD', lines: [{ total: '20.00' }] });
    const added = await put(21, { shipping: { country: 'CA' }, shipping_lines: [{ method_id: 'flat_rate', instance_id: '1', method_title: 'Flat rate', total: '10.00' }] });
    expect(added.body).toMatchObject({ total: '33.90', shipping_total: '10.00', shipping_tax: '1.30' });
    const lineId = added.body.shipping_lines[0].id;

    const updated = await put(21, { shipping_lines: [{ id: lineId, method_id: 'flat_rate', instance_id: '2', total: '15.00' }] });
    expect(updated.body).toMatchObject({ total: '39.55', shipping_lines: [expect.objectContaining({ id: lineId, instance_id: '2', total: '15.00' })] });

    const removed = await put(21, { shipping_lines: [{ id: lineId, method_id: null }] });
    expect(removed.body).toMatchObject({ total: '22.60', shipping_total: '0.00', shipping_lines: [] });
  });

  it('refuses a line id of another order and a new line without method_id, changing nothing', async () => {
    const { model, put } = shop();
    model.seed({ id: 22, currency: 'CAD', lines: [{ total: '20.00' }], shipping_total: '5.00' });
    expect(await put(22, { shipping_lines: [{ id: 99, method_id: 'flat_rate', total: '1.00' }] })).toMatchObject({ status: 400, body: { code: 'woocommerce_rest_invalid_item_id' } });
    expect(await put(22, { shipping_lines: [{ total: '1.00' }] })).toMatchObject({ status: 400, body: { code: 'woocommerce_rest_invalid_shipping_item' } });
    expect(model.get(22)).toMatchObject({ total: '25.00', shipping_total: '5.00' });
  });
});
