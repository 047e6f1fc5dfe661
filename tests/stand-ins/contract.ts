/**
 * The stand-ins' contract: one scenario, run once with the providers behind
 * msw (tests/support/providers.ts) and once against the local HTTP stand-ins
 * (stand-ins/<provider>/loopback-server.ts). Both variants drive the service's real
 * store and card clients and its real route handlers, so the same assertions
 * passing in both files is what "the stand-ins are faithful" means here.
 */
import { describe, expect, it } from 'vitest';
import { POST as cardWebhook } from '@/app/api/cardprovider/webhook/route';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingWebhook } from '@/app/api/shipping/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { StripeCardProvider } from '@/lib/card/stripe';
import { paymentIntentRequestSchema } from '@/lib/checkout/schemas';
import { CardProviderError, StoreError } from '@/lib/errors';
import { WooCommerceStore } from '@/lib/store/woocommerce';
import type { StripeModel } from '@/stand-ins/stripe/model';
import { cardEvent, shipNotification, signCardEvent } from '@/stand-ins/webhook-deliveries';
import type { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_STRIPE_KEY, TEST_WEBHOOK_SECRET } from '../support/env';
import { freshIp, postJson, tokenFor } from '../support/requests';
import { EMAIL_CASES } from './email-cases';

export interface ContractTarget {
  /** Where the store client points: https://shop.test (msw, Basic auth) or http://127.0.0.1:<port> (OAuth 1.0a). */
  storeUrl(): string;
  /** STRIPE_API_BASE_URL: undefined for msw (Stripe's own host), the stand-in's URL otherwise. */
  stripeBaseUrl(): string | undefined;
  woo(): WooCommerceModel;
  stripe(): StripeModel;
  /** Sets the route handlers' configuration to this target. */
  useEnv(): void;
}

let nextOrderId = 7000;
const newOrderId = () => (nextOrderId += 1);

const failureOf = async (promise: Promise<unknown>): Promise<unknown> => promise.then(() => undefined, (error: unknown) => error);

export function defineContract(label: string, target: ContractTarget): void {
  /** A raw REST call with the consumer key and secret (HTTP Basic), for what the store client does not surface (messages). */
  const rawFetch = (method: string, path: string, body?: unknown) =>
    fetch(`${target.storeUrl()}/wp-json${path}`, {
      method,
      headers: {
        Authorization: `Basic ${Buffer.from(`${TEST_CONSUMER_KEY}:${TEST_CONSUMER_SECRET}`).toString('base64')}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const rawStore = async (method: string, path: string, body?: unknown) => {
    const response = await rawFetch(method, path, body);
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  const store = (credentials = { consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET }) =>
    new WooCommerceStore({ url: target.storeUrl(), ...credentials }, 2000);
  const card = (secretKey = TEST_STRIPE_KEY) =>
    new StripeCardProvider({ secretKey, webhookSecrets: [TEST_WEBHOOK_SECRET], apiBaseUrl: target.stripeBaseUrl() }, 2000);

  describe(`${label}: WooCommerce`, () => {
    it('returns an order as WooCommerce shapes it', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '12.50' }, { total: '7.25' }], shipping_total: '4.00', currency: 'EUR' });
      const order = await store().getOrder(id);
      expect(order).toMatchObject({ id, status: 'pending', currency: 'EUR', total: '23.75', shipping_total: '4.00', customer_id: 0 });
      expect(order.line_items.map((l) => l.total)).toEqual(['12.50', '7.25']);
    });

    it('merges addresses field by field, updates meta by id or key, and routes internal keys to order fields', async () => {
      const id = newOrderId();
      target.woo().seed({ id, billing: { first_name: 'Ada', city: 'London' }, meta_data: [{ key: 'color', value: 'red' }] });
      const before = await store().getOrder(id);
      const colorId = before.meta_data.find((m) => m.key === 'color')?.id;
      const order = await store().updateOrder(id, {
        billing: { city: 'Paris' },
        meta_data: [
          { id: colorId, key: 'color', value: 'blue' },
          { key: 'size', value: 'L' },
          { key: '_payment_method', value: 'manual' },
          { key: '_transaction_id', value: 'tx_1' },
        ],
      });
      expect(order.billing).toMatchObject({ first_name: 'Ada', city: 'Paris' });
      expect(order.meta_data.map((m) => [m.key, m.value])).toEqual([
        ['color', 'blue'],
        ['size', 'L'],
      ]);
      expect(order.payment_method).toBe('manual');
      const again = await store().updateOrder(id, { meta_data: [{ key: 'size', value: 'XL' }] });
      expect(again.meta_data.filter((m) => m.key === 'size').map((m) => m.value)).toEqual(['XL']);
    });

    it('ignores date_paid on write and stamps it when the order becomes processing', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const written = await store().updateOrder(id, { date_paid: '2001-01-01T00:00:00' });
      expect(written.date_paid).toBeNull();
      const paid = await store().updateOrder(id, { status: 'processing' });
      expect(paid.status).toBe('processing');
      expect(paid.date_paid).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(paid.date_paid).not.toBe('2001-01-01T00:00:00');
    });

    it('recalculates taxes and the total when an address is written', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '100.00' }], shipping_total: '10.00' });
      const order = await store().updateOrder(id, { billing: { country: 'CA' } });
      expect(order.total_tax).toBe('14.30');
      expect(order.total).toBe('124.30');
    });

    it('refuses an unknown status with rest_invalid_param and changes nothing', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const error = await failureOf(store().updateOrder(id, { status: 'teleported', customer_note: 'x' }));
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ failure: 'invalid_param', status: 400, code: 'rest_invalid_param' });
      expect(target.woo().get(id)).toMatchObject({ status: 'pending', customer_note: '' });
      // A registered custom status is accepted.
      await expect(store().updateOrder(id, { status: 'shipped' })).resolves.toMatchObject({ status: 'shipped' });
    });

    it('answers a missing order with "Invalid ID.": 404 on read, 400 on write', async () => {
      expect(await failureOf(store().getOrder(999_999))).toMatchObject({ failure: 'not_found', status: 404 });
      expect(await failureOf(store().updateOrder(999_999, { customer_note: 'x' }))).toMatchObject({
        failure: 'not_found',
        status: 400,
        code: 'woocommerce_rest_shop_order_invalid_id',
      });
      expect(await rawStore('GET', '/wc/v3/orders/999999')).toEqual({
        status: 404,
        body: { code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', data: { status: 404 } },
      });
      expect(await rawStore('PUT', '/wc/v3/orders/999999', { customer_note: 'x' })).toEqual({
        status: 400,
        body: { code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', data: { status: 400 } },
      });
    });

    it('stamps date_paid at the payment-complete status: processing, or completed when every item is virtual and downloadable', async () => {
      const ebooks = newOrderId();
      target.woo().seed({ id: ebooks, lines: [{ total: '9.00', virtual: true, downloadable: true }, { total: '3.00', virtual: true, downloadable: true }] });
      const processing = await store().updateOrder(ebooks, { status: 'processing' });
      expect(processing).toMatchObject({ status: 'processing', date_paid: null, date_paid_gmt: null });
      const completed = await store().updateOrder(ebooks, { status: 'completed' });
      expect(completed.date_paid).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      expect(completed.date_paid_gmt).toBe(completed.date_paid);

      // One item that is virtual but not downloadable (a service) needs processing.
      const mixed = newOrderId();
      target.woo().seed({ id: mixed, lines: [{ total: '9.00', virtual: true, downloadable: true }, { total: '3.00', virtual: true }] });
      expect((await store().updateOrder(mixed, { status: 'processing' })).date_paid).not.toBeNull();
    });

    it('maps meta _date_paid (Unix seconds) to the paid date, before the status, and keeps it out of meta_data', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '9.00', virtual: true, downloadable: true }] });
      const seconds = Math.floor(Date.parse('2026-11-22T02:30:15Z') / 1000);
      const paid = await store().updateOrder(id, { status: 'processing', meta_data: [{ key: '_date_paid', value: String(seconds) }] });
      expect(paid).toMatchObject({ status: 'processing', date_paid: '2026-11-22T02:30:15', date_paid_gmt: '2026-11-22T02:30:15' });
      expect(paid.meta_data.map((m) => m.key)).not.toContain('_date_paid');
    });

    it('logs no notice for meta _date_paid with the companion plugin, which sets the paid date itself, and one without it', async () => {
      const seconds = Math.floor(Date.parse('2026-11-22T02:30:15Z') / 1000);
      const before = target.woo().phpNotices().length;
      const withPlugin = newOrderId();
      target.woo().seed({ id: withPlugin });
      expect(await store().updateOrder(withPlugin, { meta_data: [{ key: '_date_paid', value: String(seconds) }] })).toMatchObject({ date_paid: '2026-11-22T02:30:15' });
      expect(target.woo().phpNotices().slice(before)).toEqual([]);
      target.woo().cartBridgeInstalled = false;
      try {
        const without = newOrderId();
        target.woo().seed({ id: without });
        expect(await store().updateOrder(without, { meta_data: [{ key: '_date_paid', value: String(seconds) }] })).toMatchObject({ date_paid: '2026-11-22T02:30:15' });
        expect(target.woo().phpNotices().slice(before)).toEqual([expect.stringContaining('"_date_paid"')]);
      } finally {
        target.woo().cartBridgeInstalled = true;
      }
    });

    it('hides _paid_date from REST reads', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const written = await store().updateOrder(id, { meta_data: [{ key: '_paid_date', value: '2026-11-22T02:30:15.000Z' }, { key: 'kept', value: 'yes' }] });
      expect(written.meta_data.map((m) => m.key)).toEqual(['kept']);
      expect((await store().getOrder(id)).meta_data.map((m) => m.key)).toEqual(['kept']);
      expect(target.woo().hiddenMetaOf(id)._paid_date).toBe('2026-11-22T02:30:15.000Z');
    });

    it('logs a "doing it wrong" notice for each internal key written as meta, stores its value anyway, and none for properties', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const before = target.woo().phpNotices().length;
      const viaMeta = await store().updateOrder(id, {
        meta_data: [
          { key: '_payment_method', value: 'cardprovider' },
          { key: '_transaction_id', value: 'ch_1' },
          { key: '_paid_date', value: '2026-11-22T02:30:15.000Z' },
        ],
      });
      expect(viaMeta).toMatchObject({ payment_method: 'cardprovider', transaction_id: 'ch_1' });
      // `_paid_date` has no setter on WC_Order: hidden, but no notice.
      expect(target.woo().phpNotices().slice(before)).toEqual([
        'is_internal_meta_key was called incorrectly. Generic add/update/get meta methods should not be used for internal meta data, including "_payment_method". Use getters and setters.',
        'is_internal_meta_key was called incorrectly. Generic add/update/get meta methods should not be used for internal meta data, including "_transaction_id". Use getters and setters.',
      ]);
      const viaProperties = await store().updateOrder(id, { payment_method: 'manual', payment_method_title: 'Manual', transaction_id: 'tx_2' });
      expect(viaProperties).toMatchObject({ payment_method: 'manual', transaction_id: 'tx_2' });
      expect(target.woo().phpNotices().slice(before)).toHaveLength(2);
    });

    it('treats meta by unknown id as a new entry: every entry with its key goes, one comes back with a new id', async () => {
      const id = newOrderId();
      target.woo().seed({ id, meta_data: [{ key: 'color', value: 'red' }, { key: 'color', value: 'green' }, { key: 'size', value: 'L' }] });
      const before = await store().getOrder(id);
      const known = before.meta_data.map((m) => m.id);
      const order = await store().updateOrder(id, { meta_data: [{ id: 987_654, key: 'color', value: 'blue' }] });
      const colors = order.meta_data.filter((m) => m.key === 'color');
      expect(colors.map((m) => m.value)).toEqual(['blue']);
      expect(known).not.toContain(colors[0]?.id);
      expect(colors[0]?.id).not.toBe(987_654);
      expect(order.meta_data.find((m) => m.key === 'size')?.value).toBe('L');
    });

    it('collapses duplicate keys and matches entries without id by key', async () => {
      const id = newOrderId();
      target.woo().seed({ id, meta_data: [{ key: 'color', value: 'red' }, { key: 'color', value: 'green' }] });
      const firstId = (await store().getOrder(id)).meta_data[0]?.id;
      const byKey = await store().updateOrder(id, { meta_data: [{ key: 'color', value: 'blue' }] });
      expect(byKey.meta_data).toEqual([{ id: firstId, key: 'color', value: 'blue' }]);

      const twice = await store().updateOrder(id, {
        meta_data: [
          { key: 'size', value: 'S' },
          { key: 'size', value: 'XL' },
        ],
      });
      expect(twice.meta_data.filter((m) => m.key === 'size').map((m) => m.value)).toEqual(['XL']);
    });

    it('knows exactly the stock statuses, refuses wc-prefixed and unregistered ones with 400 rest_invalid_param', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      target.woo().removeStatus('shipped');
      // Stock WooCommerce: without the companion plugin, which registers `authorized`.
      target.woo().cartBridgeInstalled = false;
      try {
        expect(target.woo().registeredStatuses).toEqual([
          'auto-draft',
          'pending',
          'processing',
          'on-hold',
          'completed',
          'cancelled',
          'refunded',
          'failed',
          'checkout-draft',
        ]);
        for (const status of ['wc-processing', 'shipped', 'awaiting_shipment']) {
          expect(await failureOf(store().updateOrder(id, { status }))).toMatchObject({ status: 400, code: 'rest_invalid_param' });
        }
        const refused = await rawStore('PUT', `/wc/v3/orders/${id}`, { status: 'wc-processing' });
        const notOneOf = 'status is not one of auto-draft, pending, processing, on-hold, completed, cancelled, refunded, failed, and checkout-draft.';
        expect(refused).toEqual({
          status: 400,
          body: {
            code: 'rest_invalid_param',
            message: 'Invalid parameter(s): status',
            data: { status: 400, params: { status: notOneOf }, details: { status: { code: 'rest_not_in_enum', message: notOneOf, data: null } } },
          },
        });
        expect(target.woo().get(id).status).toBe('pending');
        await expect(store().updateOrder(id, { status: 'checkout-draft' })).resolves.toMatchObject({ status: 'checkout-draft' });
      } finally {
        target.woo().addStatus('shipped');
        target.woo().cartBridgeInstalled = true;
      }
    });

    it("knows the companion plugin's `authorized` status, right after on-hold, only while the plugin is installed", async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'on-hold' });
      try {
        target.woo().cartBridgeInstalled = false;
        expect(await failureOf(store().updateOrder(id, { status: 'authorized' }))).toMatchObject({ status: 400, code: 'rest_invalid_param' });
        expect(target.woo().get(id).status).toBe('on-hold');
        target.woo().cartBridgeInstalled = true;
        const statuses = target.woo().registeredStatuses;
        expect(statuses.slice(statuses.indexOf('on-hold'), statuses.indexOf('on-hold') + 2)).toEqual(['on-hold', 'authorized']);
        await expect(store().updateOrder(id, { status: 'authorized' })).resolves.toMatchObject({ status: 'authorized', date_paid: null });
      } finally {
        target.woo().cartBridgeInstalled = true;
      }
    });

    it('taxes by the shipping address by default, by billing when there is no shipping country, per line, fees included', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '0.05' }, { total: '0.05' }], shipping_total: '10.00', fees: [{ total: '2.00' }, { total: '1.00', taxable: false }] });
      // No shipping country: the billing address decides.
      const billed = await store().updateOrder(id, { billing: { country: 'CA' } });
      // 13% of each 0.05 line is 0.0065, rounded per line to 0.01 (0.02, where the rounded sum would be 0.01),
      // plus 1.30 on shipping and 0.26 on the taxable fee; the other fee is not taxed.
      expect(billed.total_tax).toBe('1.58');
      expect(billed.total).toBe('14.68');
      // A shipping country decides over the billing one.
      const shipped = await store().updateOrder(id, { shipping: { country: 'US' } });
      expect(shipped.total_tax).toBe('0.00');
      expect(shipped.total).toBe('13.10');
    });

    it('taxes by the billing address when the shop is set to', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '100.00' }] });
      target.woo().settings.taxBasedOn = 'billing';
      try {
        const order = await store().updateOrder(id, { billing: { country: 'CA' }, shipping: { country: 'US' } });
        expect(order.total_tax).toBe('13.00');
      } finally {
        delete target.woo().settings.taxBasedOn;
      }
    });

    it('clears and restores a customer cart through the companion plugin routes', async () => {
      const id = newOrderId();
      const customer = id;
      target.woo().seed({ id, customer_id: customer, lines: [{ total: '5.00' }, { total: '6.00' }] });
      await expect(store().restoreCustomerCart(customer, id)).resolves.toBe(2);
      expect(target.woo().carts.get(customer)).toHaveLength(2);
      await store().clearCustomerCart(customer);
      expect(target.woo().carts.get(customer)).toEqual([]);
    });

    it('restores once per restore key and customer: a repeated key answers the same and leaves the edited cart alone', async () => {
      const id = newOrderId();
      const customer = id;
      target.woo().seed({ id, customer_id: customer, lines: [{ total: '5.00' }, { total: '6.00' }] });
      await expect(store().restoreCustomerCart(customer, id, 'evt_restore_1')).resolves.toBe(2);
      target.woo().carts.set(customer, [{ product_id: 42, quantity: 3 }]);
      expect(await rawStore('POST', `/wc-checkout-bridge/v1/customers/${customer}/cart/restore`, { order_id: id, restore_key: 'evt_restore_1' })).toEqual({
        status: 200,
        body: { restored: true, items: 2, replayed: true },
      });
      expect(target.woo().carts.get(customer)).toEqual([{ product_id: 42, quantity: 3 }]);
      // Another key (another failure) restores again.
      await expect(store().restoreCustomerCart(customer, id, 'evt_restore_2')).resolves.toBe(2);
      expect(target.woo().carts.get(customer)).toHaveLength(2);
      expect((await rawStore('POST', `/wc-checkout-bridge/v1/customers/${customer}/cart/restore`, { order_id: id, restore_key: 'no spaces' })).status).toBe(400);
    });

    it("merges a shipped order's packages as the companion plugin does on a real store (answers compared with WooCommerce 10.0.2)", async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'shipped', customer_note: 'Your order has been shipped! Tracking Number: T1', meta_data: [{ key: '_tracking_number', value: 'T1' }] });
      const path = `/wc-checkout-bridge/v1/orders/${id}/shipment-packages`;
      const later = { key: 'shipment:2', tracking_number: 'P2', carrier: 'ups', ship_date: '2026-05-02' };
      expect(await rawStore('POST', path, { package: later, note_line: 'line P2' })).toEqual({ status: 200, body: { added: true, shipped: false, status: 'shipped', packages: [later] } });
      // The same package, and the first one (known by the spec's _tracking_number only), are held already.
      expect((await rawStore('POST', path, { package: later, note_line: 'line P2' })).body).toMatchObject({ added: false, packages: [later] });
      expect((await rawStore('POST', path, { package: { key: 'tracking:T1', tracking_number: 'T1' }, note_line: 'dup' })).body).toMatchObject({ added: false });
      expect(target.woo().get(id).customer_note).toBe('Your order has been shipped! Tracking Number: T1\nline P2');

      expect(await rawStore('POST', path, { package: { tracking_number: 'P3' } })).toMatchObject({
        status: 400,
        body: { code: 'rest_invalid_param', data: { status: 400, params: { package: 'key is a required property of package.' } } },
      });
      expect(await rawStore('POST', '/wc-checkout-bridge/v1/orders/999999/shipment-packages', { package: later })).toEqual({
        status: 404,
        body: { code: 'checkout_bridge_order_not_found', message: 'Order not found.', data: { status: 404 } },
      });
      target.woo().update(id, { meta_data: [{ key: '_shipment_packages', value: '{"edited":1}' }] });
      expect(await rawStore('POST', path, { package: { key: 'shipment:3', tracking_number: 'P3' } })).toEqual({
        status: 409,
        body: { code: 'checkout_bridge_packages_unreadable', message: "The order's shipment packages are not readable; nothing was changed.", data: { status: 409 } },
      });
    });

    it('ships through the merge only while the order is in the status read; an unknown status is refused', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing' });
      target.woo().removeStatus('shipped');
      try {
        const path = `/wc-checkout-bridge/v1/orders/${id}/shipment-packages`;
        const body = (tracking: string, status: string) => ({
          package: { key: `shipment:${tracking}`, tracking_number: tracking },
          note_line: `another ${tracking}`,
          ship: { from: 'processing', status, customer_note: `shipped ${tracking}`, meta: { _tracking_number: tracking } },
        });
        expect(await rawStore('POST', path, body('X0', 'shipped'))).toMatchObject({
          status: 400,
          body: { code: 'rest_invalid_param', data: { params: { ship: 'ship[status] is not a registered order status.' } } },
        });
        expect((await rawStore('POST', path, body('ONE', 'completed'))).body).toMatchObject({ added: true, shipped: true, status: 'completed', packages: [] });
        expect((await rawStore('POST', path, body('TWO', 'completed'))).body).toMatchObject({ added: true, shipped: false, status: 'completed' });
        expect(target.woo().get(id)).toMatchObject({ status: 'completed', customer_note: 'shipped ONE\nanother TWO' });
        const other = newOrderId();
        target.woo().seed({ id: other, status: 'on-hold' });
        expect((await rawStore('POST', `/wc-checkout-bridge/v1/orders/${other}/shipment-packages`, body('Z9', 'completed'))).body).toEqual({
          added: false,
          shipped: false,
          status: 'on-hold',
          packages: [],
        });
      } finally {
        target.woo().addStatus('shipped');
      }
    });

    it('answers the companion plugin 404s: unknown customer, unknown order, someone else\'s order', async () => {
      const id = newOrderId();
      target.woo().seed({ id, customer_id: id, lines: [{ total: '5.00' }] });
      target.woo().seedCustomer({ id: id + 500_000, email: 'someone@example.com' });
      expect(await failureOf(store().clearCustomerCart(999_999))).toMatchObject({ status: 404, code: 'checkout_bridge_customer_not_found' });
      expect(await failureOf(store().restoreCustomerCart(999_999, id))).toMatchObject({ status: 404, code: 'checkout_bridge_customer_not_found' });
      expect(await failureOf(store().restoreCustomerCart(id, 999_999))).toMatchObject({ status: 404, code: 'checkout_bridge_order_not_found' });
      expect(await failureOf(store().restoreCustomerCart(id + 500_000, id))).toMatchObject({ status: 404, code: 'checkout_bridge_order_not_found' });
      expect(target.woo().carts.get(id + 500_000)).toEqual([]);
      expect(await rawStore('POST', `/wc-checkout-bridge/v1/customers/${id}/cart/restore`, { order_id: 999_999 })).toEqual({
        status: 404,
        body: { code: 'checkout_bridge_order_not_found', message: 'Order not found for this customer.', data: { status: 404 } },
      });
    });

    it('refuses wrong credentials with 401', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const error = await failureOf(store({ consumerKey: 'ck_wrong', consumerSecret: 'cs_wrong' }).getOrder(id));
      expect(error).toMatchObject({ failure: 'rejected', status: 401 });
    });
  });

  describe(`${label}: WooCommerce refunds and order notes`, () => {
    const refund = (amount: string, id: string) => ({ amount, reason: `Stripe refund ${id}`, meta: { _provider_refund_id: id } });

    it('records a refund without a gateway call, lists it newest first with its meta, and marks a fully refunded order refunded', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing', lines: [{ total: '30.00' }] });
      const first = await store().createRefund(id, refund('10.00', 're_1'));
      expect(first).toMatchObject({ amount: '10.00', reason: 'Stripe refund re_1', meta_data: [expect.objectContaining({ key: '_provider_refund_id', value: 're_1' })] });
      expect(target.woo().get(id).status).toBe('processing');
      await store().createRefund(id, refund('20.00', 're_2'));
      expect((await store().listRefunds(id)).map((r) => r.amount)).toEqual(['20.00', '10.00']);
      expect(target.woo().get(id).status).toBe('refunded');
    });

    it('refuses a refund larger than what remains as wc_create_refund does, and one that asks for a gateway refund', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing', lines: [{ total: '30.00' }] });
      await store().createRefund(id, refund('25.00', 're_1'));
      const tooMuch = await rawStore('POST', `/wc/v3/orders/${id}/refunds`, { amount: '5.01', api_refund: false });
      // The controller passes a bare 500 as the WP_Error's data, and that is what the body shows.
      expect(tooMuch).toEqual({ status: 500, body: { code: 'woocommerce_rest_cannot_create_order_refund', message: 'Invalid refund amount.', data: 500 } });
      const negative = await rawStore('POST', `/wc/v3/orders/${id}/refunds`, { amount: '-1.00', api_refund: false });
      expect(negative).toEqual({
        status: 500,
        body: { code: 'woocommerce_rest_invalid_order_refund', message: 'Refund amount must be greater than zero.', data: 400 },
      });
      const viaGateway = await rawStore('POST', `/wc/v3/orders/${id}/refunds`, { amount: '1.00' });
      expect(viaGateway.body.code).toBe('woocommerce_rest_cannot_create_order_refund');
      expect(await store().listRefunds(id)).toHaveLength(1);
      expect(await failureOf(store().createRefund(id, refund('5.01', 're_2')))).toMatchObject({ status: 500, code: 'woocommerce_rest_cannot_create_order_refund' });
    });

    it('deletes a refund without force (the route defaults it to true), and refuses force=false with 501', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing', lines: [{ total: '30.00' }] });
      const first = await store().createRefund(id, refund('5.00', 're_1'));
      const second = await store().createRefund(id, refund('6.00', 're_2'));
      const trashed = await rawStore('DELETE', `/wc/v3/orders/${id}/refunds/${first.id}?force=false`);
      expect(trashed).toMatchObject({ status: 501, body: { code: 'woocommerce_rest_trash_not_supported', data: { status: 501 } } });
      const deleted = await rawStore('DELETE', `/wc/v3/orders/${id}/refunds/${first.id}`);
      expect(deleted).toMatchObject({ status: 200, body: { id: first.id, amount: '5.00' } });
      expect((await store().listRefunds(id)).map((r) => r.id)).toEqual([second.id]);
      await store().deleteRefund(id, second.id);
      expect(await store().listRefunds(id)).toEqual([]);
      expect(await rawStore('DELETE', `/wc/v3/orders/${id}/refunds/${second.id}`)).toMatchObject({
        status: 404,
        body: { code: 'woocommerce_rest_shop_order_refund_invalid_id', message: 'Invalid ID.' },
      });
    });

    it('adds a private order note (not a customer note)', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing' });
      await store().addPrivateNote(id, 'Dispute opened at Stripe.');
      const notes = await rawStore('GET', `/wc/v3/orders/${id}/notes`);
      expect(notes.body).toEqual([expect.objectContaining({ note: 'Dispute opened at Stripe.', customer_note: false })]);
      const missing = await rawStore('POST', `/wc/v3/orders/${id}/notes`, { customer_note: false });
      expect(missing).toMatchObject({ status: 400, body: { code: 'rest_missing_callback_param' } });
    });
  });

  describe(`${label}: WooCommerce validates as WordPress does`, () => {
    const invalidBilling = (message: string, code: string, data: unknown = null) => ({
      status: 400,
      body: {
        code: 'rest_invalid_param',
        message: 'Invalid parameter(s): billing',
        data: { status: 400, params: { billing: message }, details: { billing: { code, message, data } } },
      },
    });

    it('agrees with the service on every email of the table: whatever the store refuses, the service refuses first', async () => {
      const id = newOrderId();
      target.woo().seed({ id, billing: { email: 'before@example.com' } });
      for (const { email, wordpress, service, why } of EMAIL_CASES) {
        const written = await rawStore('PUT', `/wc/v3/orders/${id}`, { billing: { email } });
        const storeVerdict = written.status === 200 ? 'accepts' : 'refuses';
        if (storeVerdict === 'refuses') expect(written, why).toEqual(invalidBilling('Invalid email address.', 'rest_invalid_email'));
        const serviceVerdict = paymentIntentRequestSchema.safeParse({ token: 't', contact_info: { email } }).success ? 'accepts' : 'refuses';
        expect({ email, store: storeVerdict, service: serviceVerdict }, why).toEqual({ email, store: wordpress, service });
        expect(storeVerdict === 'refuses' && serviceVerdict === 'accepts', `${why}: the service lets through what the store refuses`).toBe(false);
      }
    });

    it('refuses an empty billing email, accepts null (it clears the email), and changes nothing when it refuses', async () => {
      const id = newOrderId();
      target.woo().seed({ id, billing: { email: 'keep@example.com', city: 'Leeds' } });
      expect(await rawStore('PUT', `/wc/v3/orders/${id}`, { billing: { email: '', city: 'York' } })).toEqual(
        invalidBilling('Invalid email address.', 'rest_invalid_email'),
      );
      expect(target.woo().get(id).billing).toMatchObject({ email: 'keep@example.com', city: 'Leeds' });
      expect(await rawStore('PUT', `/wc/v3/orders/${id}`, { billing: { email: 123 } })).toEqual(
        invalidBilling('billing[email] is not of type string,null.', 'rest_invalid_type', { param: 'billing[email]' }),
      );
      const cleared = await rawStore('PUT', `/wc/v3/orders/${id}`, { billing: { email: null } });
      expect(cleared.status).toBe(200);
      expect(cleared.body.billing.email).toBe('');
    });

    it('reports every invalid parameter together, with each one\'s details', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const refused = await rawStore('PUT', `/wc/v3/orders/${id}`, { status: 'nope', billing: { first_name: 7 }, meta_data: 'x' });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe('Invalid parameter(s): status, billing, meta_data');
      expect(refused.body.data.details).toMatchObject({
        status: { code: 'rest_not_in_enum' },
        billing: { code: 'rest_invalid_type', message: 'billing[first_name] is not of type string.', data: { param: 'billing[first_name]' } },
        meta_data: { code: 'rest_invalid_type', message: 'meta_data[0] is not of type object.' },
      });
    });

    it('refuses a body holding an unpaired UTF-16 surrogate as PHP\'s json_decode does', async () => {
      const id = newOrderId();
      target.woo().seed({ id });
      const refused = await rawStore('PUT', `/wc/v3/orders/${id}`, { billing: { first_name: 'Ada\ud800' } });
      expect(refused).toEqual({
        status: 400,
        body: {
          code: 'rest_invalid_json',
          message: 'Invalid JSON body passed.',
          data: { status: 400, json_error_code: 10, json_error_message: 'Single unpaired UTF-16 surrogate in unicode escape' },
        },
      });
      expect(target.woo().get(id).billing.first_name).toBe('');
    });
  });

  describe(`${label}: WooCommerce answers as a real 10.0.2 store does`, () => {
    it('lists orders newest first, per_page at a time, with the total in X-WP-Total', async () => {
      const older = newOrderId();
      const newer = newOrderId();
      target.woo().seed({ id: older });
      target.woo().seed({ id: newer });
      const page = await rawFetch('GET', '/wc/v3/orders?per_page=2');
      expect(((await page.json()) as { id: number }[]).map((o) => o.id)).toEqual([newer, older]);
      const total = target.woo().orders.size;
      expect(page.headers.get('x-wp-total')).toBe(String(total));
      expect(page.headers.get('x-wp-totalpages')).toBe(String(Math.ceil(total / 2)));
      expect((await rawStore('GET', '/wc/v3/orders')).body).toHaveLength(Math.min(10, total));
      expect((await rawStore('GET', '/wc/v3/orders?per_page=1&page=2')).body.map((o: { id: number }) => o.id)).toEqual([older]);
      const tooMany = await rawStore('GET', '/wc/v3/orders?per_page=101');
      expect(tooMany).toMatchObject({
        status: 400,
        body: {
          code: 'rest_invalid_param',
          data: { details: { per_page: { code: 'rest_out_of_bounds', message: 'per_page must be between 1 (inclusive) and 100 (inclusive)' } } },
        },
      });
      await expect(store().checkReachable()).resolves.toBeUndefined();
    });

    it('keeps only the _fields asked for, nested with dots (a single order keeps its _links)', async () => {
      const id = newOrderId();
      target.woo().seed({ id, billing: { email: 'fields@example.com', city: 'Bath' } });
      const list = await rawStore('GET', '/wc/v3/orders?per_page=1&_fields=id');
      expect(list.body).toEqual([{ id }]);
      const one = await rawStore('GET', `/wc/v3/orders/${id}?_fields=id,billing.email,line_items.name`);
      expect(Object.keys(one.body).sort()).toEqual(['_links', 'billing', 'id', 'line_items']);
      expect(one.body).toMatchObject({ id, billing: { email: 'fields@example.com' }, line_items: [] });
      expect(one.body.billing).toEqual({ email: 'fields@example.com' });
    });

    it('shows every field of the v3 order schema, computed as WooCommerce computes them', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '25.00', quantity: 2, sku: 'TEE-1' }], shipping_total: '5.00', currency: 'EUR' });
      const { status, body: order } = await rawStore('GET', `/wc/v3/orders/${id}`);
      expect(status).toBe(200);
      expect(Object.keys(order).sort()).toEqual(
        [
          'id', 'parent_id', 'number', 'order_key', 'created_via', 'version', 'status', 'currency', 'currency_symbol',
          'date_created', 'date_created_gmt', 'date_modified', 'date_modified_gmt', 'discount_total', 'discount_tax',
          'shipping_total', 'shipping_tax', 'cart_tax', 'total', 'total_tax', 'prices_include_tax', 'customer_id',
          'customer_ip_address', 'customer_user_agent', 'customer_note', 'billing', 'shipping', 'payment_method',
          'payment_method_title', 'transaction_id', 'date_paid', 'date_paid_gmt', 'date_completed', 'date_completed_gmt',
          'cart_hash', 'meta_data', 'line_items', 'tax_lines', 'shipping_lines', 'fee_lines', 'coupon_lines', 'refunds',
          'payment_url', 'is_editable', 'needs_payment', 'needs_processing', '_links',
        ].sort(),
      );
      expect(order).toMatchObject({
        number: String(id),
        parent_id: 0,
        version: '10.0.2',
        currency_symbol: '€',
        date_created_gmt: order.date_created,
        date_completed: null,
        date_completed_gmt: null,
        discount_tax: '0.00',
        cart_tax: '0.00',
        prices_include_tax: false,
        is_editable: true,
        needs_payment: true,
        needs_processing: true,
        refunds: [],
        coupon_lines: [],
      });
      expect(order.order_key).toMatch(/^wc_order_[A-Za-z0-9]{13}$/);
      expect(order.payment_url).toBe(`${target.storeUrl()}/checkout/order-pay/${id}/?pay_for_order=true&key=${order.order_key}`);
      expect(order._links.self).toEqual([{ href: `${target.storeUrl()}/wp-json/wc/v3/orders/${id}` }]);
      expect(order.line_items[0]).toMatchObject({ quantity: 2, total: '25.00', price: 12.5, sku: 'TEE-1', variation_id: 0, taxes: [], meta_data: [] });
      expect(order.shipping_lines).toEqual([expect.objectContaining({ method_id: 'flat_rate', total: '5.00' })]);
    });

    it('fills the taxes of each line and one tax line per rate when taxes are recalculated', async () => {
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '100.00' }], shipping_total: '10.00' });
      const { body: order } = await rawStore('PUT', `/wc/v3/orders/${id}`, { billing: { country: 'CA' } });
      expect(order.line_items[0].taxes).toEqual([{ id: expect.any(Number), total: '13.00', subtotal: '13.00' }]);
      expect(order.line_items[0].subtotal_tax).toBe('13.00');
      expect(order.shipping_lines[0]).toMatchObject({ total_tax: '1.30' });
      expect(order).toMatchObject({ cart_tax: '13.00', shipping_tax: '1.30', total_tax: '14.30', total: '124.30' });
      expect(order.tax_lines).toEqual([
        expect.objectContaining({ rate_code: 'CA-TAX-1', rate_percent: 13, tax_total: '13.00', shipping_tax_total: '1.30', compound: false }),
      ]);
    });

    it('stamps date_completed on the change to completed, and lists refunds on the order, newest first, negative', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing', lines: [{ total: '30.00' }] });
      const completed = await store().updateOrder(id, { status: 'completed' });
      const raw = (await rawStore('GET', `/wc/v3/orders/${id}`)).body;
      expect(raw.date_completed).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      expect(raw.date_completed_gmt).toBe(raw.date_completed);
      expect(raw).toMatchObject({ is_editable: false, needs_payment: false });
      expect(completed.status).toBe('completed');
      const first = await store().createRefund(id, { amount: '5.00', reason: 'first', meta: {} });
      const second = await store().createRefund(id, { amount: '7.50', reason: 'second', meta: {} });
      expect((await rawStore('GET', `/wc/v3/orders/${id}`)).body.refunds).toEqual([
        { id: second.id, reason: 'second', total: '-7.50' },
        { id: first.id, reason: 'first', total: '-5.00' },
      ]);
    });

    it('routes internal meta keys with a setter to the order\'s fields, and hides those without one', async () => {
      const id = newOrderId();
      target.woo().seed({ id, billing: { email: 'old@example.com' } });
      const completedAt = Math.floor(Date.parse('2026-12-01T10:00:00Z') / 1000);
      const { status, body: order } = await rawStore('PUT', `/wc/v3/orders/${id}`, {
        meta_data: [
          { key: '_billing_email', value: 'new@example.com' },
          { key: '_shipping_city', value: 'Oslo' },
          { key: '_order_total', value: '1.23' },
          { key: '_date_completed', value: String(completedAt) },
          { key: '_customer_user', value: 5 },
          { key: 'visible', value: 'yes' },
        ],
      });
      expect(status).toBe(200);
      expect(order).toMatchObject({
        billing: { email: 'new@example.com' },
        shipping: { city: 'Oslo' },
        total: '1.23',
        date_completed: '2026-12-01T10:00:00',
        customer_id: 0,
      });
      expect(order.meta_data.map((m: { key: string }) => m.key)).toEqual(['visible']);
      expect(target.woo().hiddenMetaOf(id)._customer_user).toBe(5);
      const refused = await rawStore('PUT', `/wc/v3/orders/${id}`, { customer_note: 'x', meta_data: [{ key: '_billing_email', value: 'ada@x-.com' }] });
      expect(refused).toEqual({ status: 400, body: { code: 'order_invalid_billing_email', message: 'Invalid billing email address', data: { status: 400 } } });
      expect(target.woo().get(id)).toMatchObject({ customer_note: '', billing: { email: 'new@example.com' } });
    });

    it('shows refunds with refunded_by, their dates in GMT and their line arrays; notes with their author', async () => {
      const id = newOrderId();
      target.woo().seed({ id, status: 'processing', lines: [{ total: '30.00' }] });
      await store().createRefund(id, { amount: '4.00', reason: 'Stripe refund re_x', meta: { _provider_refund_id: 're_x' } });
      const refund = ((await rawStore('GET', `/wc/v3/orders/${id}/refunds`)).body as Record<string, any>[])[0]!;
      expect(refund).toMatchObject({
        amount: '4.00',
        refunded_by: 1,
        refunded_payment: false,
        date_created_gmt: refund.date_created,
        line_items: [],
        shipping_lines: [],
        tax_lines: [],
        fee_lines: [],
      });
      expect((await rawStore('GET', `/wc/v3/orders/${id}/refunds/${refund.id}`)).body).toMatchObject({ id: refund.id, amount: '4.00' });
      expect((await rawStore('GET', '/wc/v3/orders/999999/refunds')).body).toEqual([]);
      await store().addPrivateNote(id, 'Dispute opened at Stripe.');
      const note = ((await rawStore('GET', `/wc/v3/orders/${id}/notes`)).body as Record<string, any>[])[0]!;
      expect(note).toMatchObject({ author: 'WooCommerce', note: 'Dispute opened at Stripe.', customer_note: false, date_created_gmt: note.date_created });
      expect((await rawStore('GET', `/wc/v3/orders/${id}/notes?type=customer`)).body).toEqual([]);
    });
  });

  describe(`${label}: WooCommerce reachability (health check)`, () => {
    it('reads one order id with query parameters, and refuses wrong keys', async () => {
      target.woo().seed({ id: newOrderId() });
      await expect(store().checkReachable()).resolves.toBeUndefined();
      const error = await failureOf(store({ consumerKey: TEST_CONSUMER_KEY, consumerSecret: 'cs_wrong' }).checkReachable());
      expect(error).toBeInstanceOf(StoreError);
    });
  });

  describe(`${label}: Stripe`, () => {
    const input = (orderId: number, amount: number, key: string) => ({
      orderId,
      amount,
      currency: 'USD',
      email: 'grace@example.com',
      idempotencyKey: key,
    });

    it('creates a payment intent awaiting a payment method, with the order id in metadata', async () => {
      const orderId = newOrderId();
      const intent = await card().createPaymentIntent(input(orderId, 4500, `k-${orderId}`));
      expect(intent).toMatchObject({ amount: 4500, currency: 'usd', status: 'requires_payment_method', orderId: String(orderId) });
      expect(intent.clientSecret.startsWith(`${intent.id}_secret_`)).toBe(true);
      expect(target.stripe().intents.get(intent.id)?.description).toBe(`Order #${orderId}`);
    });

    it('replays the same answer for a reused idempotency key and refuses other parameters', async () => {
      const orderId = newOrderId();
      const first = await card().createPaymentIntent(input(orderId, 1000, `idem-${orderId}`));
      const second = await card().createPaymentIntent(input(orderId, 1000, `idem-${orderId}`));
      expect(second.id).toBe(first.id);
      const error = await failureOf(card().createPaymentIntent(input(orderId, 2000, `idem-${orderId}`)));
      expect(error).toBeInstanceOf(CardProviderError);
      expect(error).toMatchObject({ type: 'StripeIdempotencyError', status: 400 });
    });

    it('refuses a reused key with 409 while its first request still executes, then replays that request\'s answer', async () => {
      const orderId = newOrderId();
      const model = target.stripe();
      let release!: () => void;
      let held!: () => void;
      const executing = new Promise<void>((resolve) => (held = resolve));
      model.beforeExecute = async () => {
        model.beforeExecute = undefined;
        held();
        await new Promise<void>((resolve) => (release = resolve));
      };
      try {
        const first = card().createPaymentIntent(input(orderId, 1000, `busy-${orderId}`));
        await executing;
        const conflict = await failureOf(card().createPaymentIntent(input(orderId, 1000, `busy-${orderId}`)));
        // The SDK names a 409 StripeAPIError, whatever its type.
        expect(conflict).toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
        release();
        const created = await first;
        await expect(card().createPaymentIntent(input(orderId, 1000, `busy-${orderId}`))).resolves.toMatchObject({ id: created.id });
      } finally {
        model.beforeExecute = undefined;
      }
    });

    it('retrieves, updates the amount and the receipt email before payment, and refuses to after it succeeded', async () => {
      const orderId = newOrderId();
      const intent = await card().createPaymentIntent(input(orderId, 1000, `upd-${orderId}`));
      await expect(card().retrievePaymentIntent(intent.id)).resolves.toMatchObject({ id: intent.id, amount: 1000 });
      await expect(card().updatePaymentIntent(intent.id, { amount: 1200 }, orderId)).resolves.toMatchObject({ amount: 1200, receiptEmail: 'grace@example.com' });
      await expect(card().updatePaymentIntent(intent.id, { receiptEmail: 'ada@example.com' }, orderId)).resolves.toMatchObject({ amount: 1200, receiptEmail: 'ada@example.com' });
      target.stripe().succeed(intent.id);
      const error = await failureOf(card().updatePaymentIntent(intent.id, { amount: 1300 }, orderId));
      expect(error).toMatchObject({ type: 'StripeInvalidRequestError', status: 400, code: 'payment_intent_unexpected_state' });
    });

    it('answers an unknown intent as missing and an invalid amount as a request error', async () => {
      await expect(card().retrievePaymentIntent('pi_does_not_exist')).resolves.toBeUndefined();
      const error = await failureOf(card().createPaymentIntent({ ...input(newOrderId(), 1005, `kwd-${nextOrderId}`), currency: 'KWD' }));
      expect(error).toMatchObject({ type: 'StripeInvalidRequestError', status: 400, code: 'invalid_amount' });
    });

    it('lists events newest first by type and creation time, page by page with starting_after', async () => {
      const model = target.stripe();
      // A time of its own, so events other tests recorded on the shared model stay out of the window.
      const since = 4_000_000_000 + newOrderId() * 100;
      const intents = [1, 2, 3].map(() => model.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: String(newOrderId()) } }));
      const old = model.events.record('payment_intent.succeeded', intents[0]!, since - 1);
      const recorded = [
        model.events.record('payment_intent.succeeded', intents[0]!, since),
        model.events.record('payment_intent.payment_failed', intents[1]!, since + 1),
        model.events.record('payment_intent.created', intents[1]!, since + 1),
        model.events.record('payment_intent.succeeded', intents[2]!, since + 2),
      ].map((e) => e.id);
      const types = ['payment_intent.succeeded', 'payment_intent.payment_failed'];

      const first = await card().listEvents({ types, createdFrom: since, limit: 2 });
      expect(first.events.map((e) => e.id)).toEqual([recorded[3], recorded[1]]);
      expect(first.hasMore).toBe(true);
      expect(first.events[0]).toMatchObject({ type: 'payment_intent.succeeded', created: since + 2, kind: 'payment_intent', intent: { intentId: intents[2]!.id } });
      const second = await card().listEvents({ types, createdFrom: since, limit: 2, startingAfter: first.events[1]!.id });
      // Older than the window (`old`) or of another type (`created`): not listed.
      expect(second.events.map((e) => e.id)).toEqual([recorded[0]]);
      expect(second.hasMore).toBe(false);
      expect(second.events.map((e) => e.id)).not.toContain(old.id);
      const failedOnly = await card().listEvents({ types: ['payment_intent.payment_failed'], createdFrom: since, limit: 10 });
      expect(failedOnly.events.map((e) => e.id)).toEqual([recorded[1]]);
    });

    it('records what a succeeded or declined payment does as an event carrying the intent', () => {
      const model = target.stripe();
      const intent = model.create({ amount: '1000', currency: 'usd' });
      model.fail(intent.id);
      model.succeed(intent.id);
      const [failed, succeeded] = model.events.events.slice(-2);
      expect(failed).toMatchObject({ type: 'payment_intent.payment_failed', data: { object: { id: intent.id, status: 'requires_payment_method' } } });
      expect(succeeded).toMatchObject({ type: 'payment_intent.succeeded', data: { object: { id: intent.id, status: 'succeeded' } } });
    });

    it('refuses a wrong API key with 401', async () => {
      const error = await failureOf(card('sk_test_wrong_key_000').createPaymentIntent(input(newOrderId(), 1000, `auth-${nextOrderId}`)));
      expect(error).toMatchObject({ type: 'StripeAuthenticationError', status: 401 });
    });
  });

  describe(`${label}: the whole checkout through the route handlers`, () => {
    it('an order of e-books only paid by card ends processing with its paid date', async () => {
      target.useEnv();
      const id = newOrderId();
      target.woo().seed({ id, lines: [{ total: '9.00', virtual: true, downloadable: true }, { total: '3.00', virtual: true, downloadable: true }] });
      const created = (await (
        await paymentIntent(
          postJson(
            '/api/payment-intent',
            { token: await tokenFor(id), billing_address: { first_name: 'Ada', country: 'GB' }, shipping_address: null, contact_info: { email: 'ada@example.com' } },
            { ip: freshIp() },
          ),
        )
      ).json()) as { payment_intent_id: string };
      const { payload, signature } = signCardEvent(cardEvent('payment_intent.succeeded', target.stripe().succeed(created.payment_intent_id)), TEST_WEBHOOK_SECRET);
      const paid = await cardWebhook(
        new Request('http://localhost:3000/api/cardprovider/webhook', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
          body: payload,
        }),
      );
      expect(paid.status).toBe(200);
      const order = target.woo().get(id);
      expect(order.status).toBe('processing');
      expect(order.date_paid).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(order.date_paid_gmt).toBe(order.date_paid);
    });

    it('an email the store would refuse is a 400 from the service, and one it accepts is written', async () => {
      target.useEnv();
      const id = newOrderId();
      target.woo().seed({ id, billing: { email: 'before@example.com' } });
      const intentsBefore = target.stripe().intents.size;
      const refused = await paymentIntent(
        postJson('/api/payment-intent', { token: await tokenFor(id), billing_address: { email: 'ada@x-.com' } }, { ip: freshIp() }),
      );
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: 'Invalid request', details: [{ path: ['billing_address', 'email'] }] });
      expect(target.woo().get(id).billing.email).toBe('before@example.com');
      expect(target.stripe().intents.size).toBe(intentsBefore);

      const accepted = await paymentIntent(
        postJson('/api/payment-intent', { token: await tokenFor(id), billing_address: { email: 'a-b@x-y.example.com' } }, { ip: freshIp() }),
      );
      expect(accepted.status).toBe(200);
      expect(target.woo().get(id).billing.email).toBe('a-b@x-y.example.com');
    });

    it('payment-intent → card success → shipped, and submit-order for a manual payment', async () => {
      target.useEnv();
      const id = newOrderId();
      target.woo().seed({ id, billing: { email: 'grace@example.com' }, lines: [{ total: '40.00' }], shipping_total: '5.00' });
      const body = {
        token: await tokenFor(id),
        billing_address: { first_name: 'Grace', last_name: 'Hopper', country: 'US', city: 'Arlington' },
        shipping_address: null,
        contact_info: { email: 'grace@example.com', phone: '+1 555 0100' },
      };
      const ip = freshIp();
      const first = await paymentIntent(postJson('/api/payment-intent', body, { ip }));
      expect(first.status).toBe(200);
      const created = (await first.json()) as { payment_intent_id: string; client_secret: string };
      const again = (await (await paymentIntent(postJson('/api/payment-intent', body, { ip }))).json()) as { payment_intent_id: string };
      expect(again.payment_intent_id).toBe(created.payment_intent_id);
      expect(target.stripe().intents.get(created.payment_intent_id)).toMatchObject({ amount: 4500, currency: 'usd' });
      expect(target.woo().get(id).shipping).toMatchObject({ first_name: 'Grace', city: 'Arlington' });

      const { payload, signature } = signCardEvent(
        cardEvent('payment_intent.succeeded', target.stripe().succeed(created.payment_intent_id)),
        TEST_WEBHOOK_SECRET,
      );
      const paid = await cardWebhook(
        new Request('http://localhost:3000/api/cardprovider/webhook', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature, 'x-forwarded-for': freshIp() },
          body: payload,
        }),
      );
      expect(paid.status).toBe(200);
      expect(target.woo().get(id)).toMatchObject({ status: 'processing', payment_method: 'cardprovider' });
      expect(target.woo().get(id).date_paid).not.toBeNull();

      const shipped = await shippingWebhook(
        postJson('/api/shipping/webhook', shipNotification({ orderId: id, trackingNumber: '1ZCONTRACT', carrier: 'UPS' }), { origin: null }),
      );
      expect(shipped.status).toBe(200);
      const order = target.woo().get(id);
      expect(order.status).toBe('shipped');
      expect(order.meta_data.find((m) => m.key === '_tracking_number')?.value).toBe('1ZCONTRACT');

      const manualId = newOrderId();
      target.woo().seed({ id: manualId, currency: 'JPY', lines: [{ total: '3500' }], shipping_total: '500' });
      const submitted = await submitOrder(postJson('/api/submit-order', { ...body, token: await tokenFor(manualId) }, { ip: freshIp() }));
      expect(submitted.status).toBe(200);
      expect(await submitted.json()).toEqual({ success: true, order_id: manualId, total: 4000, currency: 'JPY' });
      expect(target.woo().get(manualId).meta_data.find((m) => m.key === '_manual_payment_status')?.value).toBe('pending-screenshot');
    });
  });

  describe(`${label}: saved cards`, () => {
    it("keeps a registered customer's Stripe Customer on the customer meta and hands out a Customer Session", async () => {
      const id = newOrderId();
      const wooCustomerId = id;
      target.woo().seed({ id, customer_id: wooCustomerId, lines: [{ total: '20.00' }] });

      const answer = await paymentIntent(postJson('/api/payment-intent', { token: await tokenFor(id), save_payment_method: true }, { ip: freshIp() }));
      const body = (await answer.json()) as Record<string, string>;

      expect(answer.status).toBe(200);
      expect(body.customer_session_client_secret).toMatch(/^cuss_secret_/);
      const customer = await store().getCustomer(wooCustomerId);
      const stripeCustomer = customer.meta_data.find((m) => m.key === '_stripe_customer_id')?.value as string;
      expect(stripeCustomer).toMatch(/^cus_/);
      expect(target.stripe().intents.get(body.payment_intent_id!)).toMatchObject({ customer: stripeCustomer, setup_future_usage: 'off_session' });

      target.stripe().customers.delete(stripeCustomer);
      expect(await card().customers.retrieveCustomer(stripeCustomer)).toBeUndefined();
    });
  });
}
