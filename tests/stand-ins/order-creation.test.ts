/** The WooCommerce stand-in's products and order creation, as a storefront's server uses them to turn a cart into a pending order. */
import { describe, expect, it } from 'vitest';
import { wooCommerceApiHandler } from '@/stand-ins/woocommerce/fetch-handler';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';

const credentials = { consumerKey: 'ck_test', consumerSecret: 'cs_test' };
const auth = { Authorization: `Basic ${Buffer.from('ck_test:cs_test').toString('base64')}`, 'Content-Type': 'application/json' };

function shop() {
  const model = new WooCommerceModel({ taxRates: { CA: 13 } });
  model.seed({ id: 2001, lines: [{ total: '1.00' }] });
  const handler = wooCommerceApiHandler(model, credentials);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await handler(new Request(`http://shop.test/wp-json/wc/v3/${path}`, { method, headers: auth, ...(body ? { body: JSON.stringify(body) } : {}) }));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> & { id: number } };
  };
  return { model, call };
}

describe('WooCommerce stand-in: a cart becomes a pending order', () => {
  it('prices each line from the product, never from the caller, and answers 201 with a pending order under a free id', async () => {
    const { call } = shop();
    const products = (await call('GET', 'products')).body as unknown as { id: number; price: string }[];
    expect(products.find((p) => p.id === 502)).toMatchObject({ price: '20.00' });
    const created = await call('POST', 'orders', {
      line_items: [{ product_id: 502, quantity: 2, total: '0.01' }],
      shipping_lines: [{ method_id: 'flat_rate', method_title: 'Flat rate', total: '5.00' }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 2002, status: 'pending', total: '45.00', shipping_total: '5.00' });
    expect(created.body.line_items).toMatchObject([{ product_id: 502, quantity: 2, total: '40.00' }]);
  });

  it('taxes an order created with an address, as WooCommerce calculates totals on creation', async () => {
    const { call } = shop();
    const created = await call('POST', 'orders', { line_items: [{ product_id: 502, quantity: 1 }], shipping: { country: 'CA' }, billing: { country: 'CA', email: 'ada@example.com' } });
    expect(created.body).toMatchObject({ total_tax: '2.60', total: '22.60' });
  });

  it('refuses an unknown product or an empty cart, creating nothing', async () => {
    const { call, model } = shop();
    expect((await call('POST', 'orders', { line_items: [{ product_id: 9999, quantity: 1 }] })).status).toBe(400);
    expect((await call('POST', 'orders', { line_items: [] })).status).toBe(400);
    expect(model.listOrders(1, 10).total).toBe(1);
  });
});
