import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/submit-order/route';
import { manualPaymentAwaitedNote } from '@/lib/orders/notes';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const billing = { first_name: 'Grace', last_name: 'Hopper', address_1: '1 Navy Yard', city: 'Arlington', state: 'VA', postcode: '22201', country: 'US' };
const contact = { email: 'grace@example.com', phone: '+1 555 0100' };

async function submit(body: Record<string, unknown>) {
  const response = await POST(postJson('/api/submit-order', body));
  return { status: response.status, body: await response.json() };
}

describe('POST /api/submit-order', () => {
  it('submits a pending order for manual payment with one read and one update', async () => {
    providers.woo.seed({ id: 501, lines: [{ total: '40.00' }], shipping_total: '4.35', total_tax: '3.65' });

    const { status, body } = await submit({ token: await tokenFor(501), billing_address: billing, contact_info: contact });

    expect(status).toBe(200);
    expect(body).toEqual({ success: true, order_id: 501, total: 4800, currency: 'USD' });
    expect(providers.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /wp-json/wc/v3/orders/501',
      'PUT /wp-json/wc/v3/orders/501',
    ]);
    expect(providers.callsTo('card')).toHaveLength(0);

    const update = providers.orderUpdates(501)[0]!;
    expect(update).toMatchObject({
      status: 'pending',
      billing: { ...billing, ...contact },
      shipping: billing,
      customer_note: manualPaymentAwaitedNote('Manual Payment (Zelle / Venmo)'),
      // The spec's _payment_method and _payment_method_title, as the order properties WooCommerce keeps them in.
      payment_method: 'manual',
      payment_method_title: 'Manual Payment (Zelle / Venmo)',
    });
    const meta = Object.fromEntries((update.meta_data as { key: string; value: string }[]).map((m) => [m.key, m.value]));
    expect(meta).toMatchObject({ _manual_payment_status: 'pending-screenshot' });
    expect(meta).not.toHaveProperty('_payment_method');
    expect(providers.woo.phpNotices()).toEqual([]);
    expect(Date.parse(meta._order_submitted_at!)).not.toBeNaN();
    expect(meta._checkout_address_updated).toBe(meta._order_submitted_at);

    const stored = providers.woo.get(501);
    expect(stored.status).toBe('pending');
    expect(stored.payment_method).toBe('manual');
    expect(stored.customer_note).toContain('awaiting manual payment');
    expect(stored.meta_data.find((m) => m.key === '_manual_payment_status')?.value).toBe('pending-screenshot');
  });

  it('ships to the given shipping address when there is one', async () => {
    providers.woo.seed({ id: 502 });
    const shipping = { first_name: 'Grace', city: 'New York', country: 'US' };
    await submit({ token: await tokenFor(502), billing_address: billing, shipping_address: shipping });
    expect(providers.orderUpdates(502)[0]!.shipping).toEqual(shipping);
    expect(providers.woo.get(502).shipping.city).toBe('New York');
  });

  it('ships to the billing address when shipping_address is null', async () => {
    providers.woo.seed({ id: 503 });
    await submit({ token: await tokenFor(503), billing_address: billing, shipping_address: null });
    expect(providers.orderUpdates(503)[0]!.shipping).toEqual(billing);
  });

  it('uses the configured manual payment title', async () => {
    useTestEnv({ MANUAL_PAYMENT_METHOD_TITLE: 'Bank transfer (Zelle / Venmo)' });
    providers.woo.seed({ id: 504 });
    await submit({ token: await tokenFor(504), billing_address: billing });
    expect(providers.woo.get(504).payment_method_title).toBe('Bank transfer (Zelle / Venmo)');
  });

  it('keeps one entry per meta key when submitted twice', async () => {
    providers.woo.seed({ id: 505 });
    const token = await tokenFor(505);
    expect((await submit({ token, billing_address: billing })).status).toBe(200);
    expect((await submit({ token, billing_address: { ...billing, city: 'Richmond' } })).status).toBe(200);
    const keys = providers.woo.get(505).meta_data.map((m) => m.key);
    expect(keys.filter((k) => k === '_order_submitted_at')).toHaveLength(1);
    expect(keys.filter((k) => k === '_manual_payment_status')).toHaveLength(1);
  });

  it('returns the total after WooCommerce recalculated taxes for the new address', async () => {
    providers.reset({ taxRates: { US: 10 } });
    providers.woo.seed({ id: 506, lines: [{ total: '50.00' }] });
    const { body } = await submit({ token: await tokenFor(506), billing_address: billing });
    expect(body.total).toBe(5500);
  });

  it('requires a billing address and a token', async () => {
    providers.woo.seed({ id: 507 });
    const missingBilling = await submit({ token: await tokenFor(507) });
    expect(missingBilling.status).toBe(400);
    expect(missingBilling.body.error).toBe('Invalid request');
    expect(missingBilling.body.details[0].path).toEqual(['billing_address']);

    const emptyToken = await submit({ token: '', billing_address: billing });
    expect(emptyToken.status).toBe(400);
    expect(emptyToken.body.details[0]).toMatchObject({ path: ['token'], message: 'checkout token is required' });
    expect(providers.calls).toHaveLength(0);
  });

  it('refuses an order that cannot be paid', async () => {
    providers.woo.seed({ id: 508, status: 'completed' });
    const { status, body } = await submit({ token: await tokenFor(508), billing_address: billing });
    expect(status).toBe(400);
    expect(body).toEqual({
      error: 'Order cannot be submitted for payment',
      details: { orderId: 508, status: 'completed', reason: 'Order is already paid' },
    });
    providers.woo.seed({ id: 509, status: 'cancelled' });
    const cancelled = await submit({ token: await tokenFor(509), billing_address: billing });
    expect(cancelled.body.details).toEqual({ orderId: 509, status: 'cancelled', reason: 'Order status is not pending' });
    expect(providers.orderUpdates()).toHaveLength(0);
  });

  it('answers 500 SUBMIT_ORDER_ERROR for store failures and bad tokens', async () => {
    providers.woo.seed({ id: 510 });
    providers.failStore('GET', /orders\/510$/, 503, 'unavailable', 2);
    const outage = await submit({ token: await tokenFor(510), billing_address: billing });
    expect(outage.status).toBe(500);
    expect(outage.body).toEqual({ success: false, error: { code: 'SUBMIT_ORDER_ERROR', message: 'Store request failed: get order' } });

    const badToken = await submit({ token: 'forged', billing_address: billing });
    expect(badToken.status).toBe(500);
    expect(badToken.body.error).toEqual({ code: 'SUBMIT_ORDER_ERROR', message: 'Checkout token is invalid or expired' });
    expect(providers.orderUpdates()).toHaveLength(0);
  });
});
