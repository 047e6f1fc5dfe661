/**
 * The demo page's card payment fact: read from the Stripe stand-in's intent, so
 * a payment authorized at checkout (STRIPE_CAPTURE=on_shipment) shows as
 * authorized, and as captured once shipping captured it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SECRETS, startDemoStandIns, type DemoStandIns } from '@/stand-ins/demo/world';
import type { RunningServer } from '@/stand-ins/loopback-http';
import { startStorefront } from '@/stand-ins/demo/storefront';

let standIns: DemoStandIns;
let storefront: RunningServer;

beforeAll(async () => {
  standIns = await startDemoStandIns();
  storefront = await startStorefront({
    // No service is reached here: the order view is read from the stand-ins only.
    serviceUrl: 'http://127.0.0.1:9',
    stripe: { url: standIns.stripe.url, publishableKey: DEMO_SECRETS.stripePublishableKey },
    woocommerceUrl: standIns.woocommerce.url,
    port: 0,
  });
});

afterAll(async () => {
  await storefront?.close();
  await standIns?.close();
});

const orderView = async (id: number) => (await fetch(`${storefront.url}/demo/order/${id}`)).json();

describe('the order view the demo page reads', () => {
  it('shows a manual-capture payment authorized, then captured, from the intent itself', async () => {
    const stripe = standIns.stripe.model;
    const intent = stripe.create({ amount: '4500', currency: 'usd', capture_method: 'manual', metadata: { shop_order_id: '1001' } });
    standIns.woocommerce.model.update(1001, { meta_data: [{ key: '_payment_intent_id', value: intent.id }] });
    expect((await orderView(1001)).payment).toMatchObject({ status: 'requires_payment_method' });

    stripe.authorize(intent.id);
    expect((await orderView(1001)).payment).toEqual({ status: 'requires_capture', capture_method: 'manual', amount_capturable: 4500, amount_received: 0 });

    stripe.capture(intent.id, {});
    expect((await orderView(1001)).payment).toEqual({ status: 'succeeded', capture_method: 'manual', amount_capturable: 0, amount_received: 4500 });
  });

  it('has no payment fact for an order without an intent', async () => {
    const view = await orderView(1005);
    expect(view.status).toBe('pending');
    expect(view.payment).toBeUndefined();
  });
});
