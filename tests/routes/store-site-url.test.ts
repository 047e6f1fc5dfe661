/**
 * A store reached at another address than its own Site Address (a private hostname, an internal load balancer),
 * over http://: WooCommerce signs OAuth 1.0a over its Site Address, so the service signs over WOOCOMMERCE_SITE_URL
 * and sends to WOOCOMMERCE_URL; without it, every call is refused, and the log and the health check say what to set.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GET as healthGET } from '@/app/api/health/route';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { StripeModel } from '@/stand-ins/stripe/model';
import { startStripeStandIn, type StripeStandIn } from '@/stand-ins/stripe/loopback-server';
import { signatureBaseUrl } from '@/stand-ins/woocommerce/fetch-handler';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import { startWooCommerceStandIn, type WooStandIn } from '@/stand-ins/woocommerce/loopback-server';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_CRON_SECRET, TEST_STRIPE_KEY, useTestEnv } from '../support/env';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

/** The store's Site Address (Settings → General): https for its visitors, while the service calls it over http. */
const SITE_ADDRESS = 'https://shop.example.test';
const SUBFOLDER_SITE_ADDRESS = 'http://shop.example.test/store';

let woo: WooStandIn;
let subfolderWoo: WooStandIn;
let stripe: StripeStandIn;

beforeAll(async () => {
  const credentials = { consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET };
  [woo, subfolderWoo, stripe] = await Promise.all([
    startWooCommerceStandIn({ model: new WooCommerceModel(), credentials: { ...credentials, homeUrl: SITE_ADDRESS } }),
    startWooCommerceStandIn({ model: new WooCommerceModel(), credentials: { ...credentials, homeUrl: SUBFOLDER_SITE_ADDRESS } }),
    startStripeStandIn({ model: new StripeModel(), secretKey: TEST_STRIPE_KEY }),
  ]);
});

afterAll(async () => {
  await Promise.all([woo?.close(), subfolderWoo?.close(), stripe?.close()]);
});

function useStore(store: WooStandIn, siteUrl: string | undefined): void {
  useTestEnv({ WOOCOMMERCE_URL: store.url, WOOCOMMERCE_SITE_URL: siteUrl, STRIPE_API_BASE_URL: stripe.url, CRON_SECRET: TEST_CRON_SECRET });
}

beforeEach(() => useStore(woo, undefined));

let nextOrderId = 7700;
async function paymentIntent(store: WooStandIn) {
  nextOrderId += 1;
  store.model.seed({ id: nextOrderId, lines: [{ total: '19.00' }] });
  const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(nextOrderId) }));
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, orderId: nextOrderId };
}

async function deepHealth() {
  const response = await healthGET(new Request('http://localhost:3000/api/health', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }));
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, Record<string, unknown>> } };
}

const signatureLines = () => loggedLines().filter((line) => line.event === 'store.signature_refused');

describe('the WooCommerce stand-in signs over its Site Address, as WooCommerce does', () => {
  it('the base is the Site Address with the request scheme, and the request path less the site folder', () => {
    const at = (path: string) => new URL(`http://10.0.0.7:8080${path}`);
    expect(signatureBaseUrl('https://shop.example.test', at('/wp-json/wc/v3/orders'))).toBe('http://shop.example.test/wp-json/wc/v3/orders');
    expect(signatureBaseUrl('https://shop.example.test:8443/store', at('/store/wp-json/wc/v3/orders'))).toBe(
      'http://shop.example.test:8443/store/wp-json/wc/v3/orders',
    );
    expect(signatureBaseUrl('https://shop.example.test/store', at('/wp-json/wc/v3/orders'))).toBe('http://shop.example.test/store/wp-json/wc/v3/orders');
  });
});

describe('without WOOCOMMERCE_SITE_URL, a store reached at another address than its Site Address', () => {
  it('payment-intent answers 500, and one error line names WOOCOMMERCE_SITE_URL, with no secret and nothing of the store answer', async () => {
    const { status, orderId } = await paymentIntent(woo);

    expect(status).toBe(500);
    expect(woo.model.get(orderId).status).toBe('pending');
    expect([...stripe.model.intents.values()].filter((intent) => intent.metadata.shop_order_id === String(orderId))).toEqual([]);
    expect(signatureLines()).toEqual([
      expect.objectContaining({ level: 'error', operation: 'get order', hint: expect.stringContaining('set WOOCOMMERCE_SITE_URL to the store\'s Site Address') }),
    ]);
    const everything = JSON.stringify(loggedLines());
    for (const secret of [TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, 'oauth_signature', 'provided signature does not match', woo.url]) {
      expect(everything).not.toContain(secret);
    }
  });

  it('the deep health check reports the store failed with the setting to set, and the card provider ok', async () => {
    const { status, body } = await deepHealth();

    expect(status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.checks.store).toEqual({ ok: false, latencyMs: expect.any(Number), reason: expect.stringContaining('set WOOCOMMERCE_SITE_URL') });
    expect(body.checks.card).toMatchObject({ ok: true });
    expect(JSON.stringify(body)).not.toContain(woo.url);
  });
});

describe('with WOOCOMMERCE_SITE_URL set to the Site Address', () => {
  it('payment-intent creates the intent and the deep health check reports the store ok', async () => {
    useStore(woo, SITE_ADDRESS);

    const { status, body } = await paymentIntent(woo);
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, payment_intent_id: expect.stringMatching(/^pi_/) });
    expect(await deepHealth()).toMatchObject({ status: 200, body: { status: 'ok', checks: { store: { ok: true } } } });
    expect(signatureLines()).toEqual([]);
  });

  it('a Site Address in a subfolder, reached at the root of another address, is signed over the subfolder', async () => {
    useStore(subfolderWoo, undefined);
    expect((await paymentIntent(subfolderWoo)).status).toBe(500);

    useStore(subfolderWoo, SUBFOLDER_SITE_ADDRESS);
    expect((await paymentIntent(subfolderWoo)).status).toBe(200);
  });

  it('set to another address than the Site Address, the hint says it must be the Site Address', async () => {
    useStore(woo, 'https://www.shop.example.test');

    expect((await paymentIntent(woo)).status).toBe(500);
    expect(signatureLines()).toEqual([
      expect.objectContaining({ hint: expect.stringContaining("WOOCOMMERCE_SITE_URL must be the store's Site Address") }),
    ]);
    expect((await deepHealth()).body.checks.store).toMatchObject({ ok: false, reason: expect.stringContaining('WOOCOMMERCE_SITE_URL must be') });
  });
});
