/**
 * In a real browser: Debian's Chromium, driven by playwright-core, loads the
 * demo storefront from an allowed origin and from a disallowed one; the page
 * calls the production build with `fetch` and a JSON body, so Chromium sends
 * the CORS preflight and enforces its answer. A recording proxy in front of
 * the service shows which requests actually arrived.
 *
 * The whole life of an order happens on the page, with no terminal command:
 * it shows the order, confirms the card with the Stripe stand-in as Stripe.js
 * would, the stand-in posts the signed event to the service by itself, the page
 * sees the order turn processing, and its "Ship it" button sends ShipStation's
 * notification. With CARD_LIFECYCLE_EVENTS on, its Refund and Dispute buttons
 * play Stripe's side the same way. Screenshots of each step go to test-artifacts/.
 *
 * Without Chromium the file is skipped with the reason, except under CI=true,
 * where a missing browser fails the run (.ci/run installs it).
 */
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SECRETS } from '@/scripts/stand-ins/demo';
import { freePort, type RunningServer } from '@/scripts/stand-ins/http';
import { startStorefront } from '@/scripts/stand-ins/storefront';
import {
  ARTIFACTS,
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  chromiumAvailable,
  startE2eWorld,
  startDemoStorefrontFor,
  startRecordingProxy,
  type E2eWorld,
  type RecordedRequest,
} from '../support/e2e';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const haveBrowser = chromiumAvailable();
if (!haveBrowser && !inCi) {
  process.stderr.write(`[e2e] browser test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)\n`);
}

describe.skipIf(!haveBrowser && !inCi)('storefront checkout in Chromium', () => {
  let world: E2eWorld;
  let proxy: RunningServer & { requests: RecordedRequest[] };
  let allowedStorefront: RunningServer;
  let disallowedStorefront: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI=true but no Chromium at ${CHROMIUM_PATH}: .ci/run must install it (scripts/ci/ensure-chromium.sh)`);
    // The proxy's address is what the pages call, so it must be known before the storefronts start.
    const storefrontPort = await freePort();
    const allowedOrigin = `http://127.0.0.1:${storefrontPort}`;
    world = await startE2eWorld('browser', { allowedOrigins: [allowedOrigin] });
    proxy = await startRecordingProxy(world.service.url);
    allowedStorefront = await startDemoStorefrontFor(world, proxy.url, storefrontPort);
    disallowedStorefront = await startDemoStorefrontFor(world, proxy.url);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([allowedStorefront?.close(), disallowedStorefront?.close(), proxy?.close()]);
    await world?.close();
  });

  async function openCheckout(storefront: RunningServer, orderId: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    await page.goto(`${storefront.url}/?order=${orderId}`);
    await page.locator('#order-id', { hasText: String(orderId) }).waitFor();
    return page;
  }

  async function finalStatus(page: Page): Promise<{ state: string; text: string }> {
    const status = page.locator('#status:not([data-state="working"]):not([data-state="idle"])');
    await status.waitFor({ timeout: 30_000 });
    return { state: (await status.getAttribute('data-state')) ?? '', text: await status.innerText() };
  }

  const orderState = async (id: number) => (await fetch(`${world.woocommerceUrl}/demo/orders/${id}`)).json();
  const arrived = (origin: string, path: string) =>
    proxy.requests.filter((r) => r.origin === origin && r.path === path).map((r) => r.method);

  const timeline = (page: Page) => page.locator('#timeline').innerText();

  it('on the allowed origin, the order goes pending → processing → shipped on the page alone', async () => {
    const page = await openCheckout(allowedStorefront, 1001);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    expect(await page.locator('#order-lines').innerText()).toMatch(/Organic cotton T-shirt × 2\s+40\.00 USD[\s\S]*Shipping\s+5\.00 USD[\s\S]*Total\s+45\.00 USD/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-1-pending.png'), fullPage: true });

    await page.click('#pay-card');
    const paid = await finalStatus(page);
    expect(paid).toEqual({ state: 'ok', text: 'Payment received: order #1001 is now processing.' });
    expect(arrived(allowedStorefront.url, '/api/payment-intent')).toEqual(['OPTIONS', 'POST']);
    let order = await orderState(1001);
    expect(order).toMatchObject({ status: 'processing', payment_method: 'cardprovider' });
    expect(order.billing).toMatchObject({ first_name: 'Grace', email: 'grace@example.com', phone: '+1 555 0100', country: 'US' });
    const intentId = order.meta._payment_intent_id as string;
    // Nobody but the Stripe stand-in told the service: its own delivery, signed, answered 200.
    const deliveries = world.standIns.stripe.webhookAttempts.filter((a) => a.type === 'payment_intent.succeeded');
    expect(deliveries.map((a) => a.status)).toEqual([200]);
    await page.locator('#order-status', { hasText: 'processing' }).waitFor();
    await page.locator('#timeline', { hasText: '_provider_payment_intent_id' }).waitFor();
    expect(await timeline(page)).toMatch(/Status pending → processing[\s\S]*_provider_payment_intent_id = pi_/);
    expect(await timeline(page)).toContain(intentId);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-2-processing.png'), fullPage: true });

    await page.click('#ship');
    const shipped = await finalStatus(page);
    expect(shipped.state).toBe('ok');
    expect(shipped.text).toMatch(/^Shipped: Your order has been shipped! Tracking Number: 1Z\w+ \| Carrier: UPS/);
    expect(proxy.requests.some((r) => r.method === 'POST' && r.path === '/api/shipping/webhook')).toBe(true);
    order = await orderState(1001);
    expect(order.status).toBe('shipped');
    expect(order.meta._tracking_number).toMatch(/^1Z/);
    await page.locator('#order-status', { hasText: 'shipped' }).waitFor();
    await page.locator('#timeline', { hasText: 'processing → shipped' }).waitFor();
    expect(await timeline(page)).toContain('Note to the customer: “Your order has been shipped!');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-3-shipped.png'), fullPage: true });
    await page.close();
  });

  it('on the allowed origin, a declined card leaves the order pending and the page shows the failure note', async () => {
    const page = await openCheckout(allowedStorefront, 1002);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    await page.check('input[name="card"][value="pm_card_chargeDeclined"]');
    await page.click('#pay-card');
    const status = await finalStatus(page);
    expect(status.state).toBe('declined');
    expect(status.text).toMatch(/^Card declined: Your card was declined\. The order stays pending\. Note to the customer: “.*Your card was declined\./);
    const order = await orderState(1002);
    expect(order.status).toBe('pending');
    expect(order.customer_note).toContain('Your card was declined.');
    expect(order.meta._payment_error).toBe('Your card was declined.');
    expect(status.text).toContain(order.customer_note);
    await page.locator('#timeline', { hasText: '_payment_failed_at' }).waitFor();
    expect(await timeline(page)).toContain('_payment_error = Your card was declined.');
    expect(world.standIns.stripe.webhookAttempts.filter((a) => a.type === 'payment_intent.payment_failed').map((a) => a.status)).toEqual([200]);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-declined.png'), fullPage: true });
    await page.close();
  });

  it('on the allowed origin, Pay manually submits the order and shows its total', async () => {
    const page = await openCheckout(allowedStorefront, 1005);
    await page.click('#submit-manual');
    const status = await finalStatus(page);
    expect(status.state).toBe('ok');
    expect(status.text).toContain('Order #1005 submitted for manual payment: 27.50 EUR');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-allowed-origin-manual.png'), fullPage: true });
    const order = await orderState(1005);
    expect(order.meta._manual_payment_status).toBe('pending-screenshot');
    expect(order.payment_method).toBe('manual');
    await page.close();
  });

  it('on an already paid order the page shows the refusal', async () => {
    const page = await openCheckout(allowedStorefront, 1004);
    await page.click('#pay-card');
    const status = await finalStatus(page);
    expect(status).toEqual({ state: 'error', text: 'HTTP 400: Order cannot be paid' });
    await page.close();
  });

  it('on a disallowed origin the browser blocks the call: only the preflight arrives and the order is untouched', async () => {
    const before = await orderState(1003);
    const page = await openCheckout(disallowedStorefront, 1003);
    await page.click('#pay-card');
    const status = await finalStatus(page);
    expect(status.state).toBe('blocked');
    expect(status.text).toContain('Blocked by the browser');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-disallowed-origin.png'), fullPage: true });

    expect(arrived(disallowedStorefront.url, '/api/payment-intent')).toEqual(['OPTIONS']);
    const after = await orderState(1003);
    expect(after).toEqual(before);
    expect([...world.standIns.stripe.model.intents.values()].some((i) => i.metadata.shop_order_id === '1003')).toBe(false);
    await page.close();
  });
});

describe.skipIf(!haveBrowser && !inCi)('refunds and disputes from the demo page, with CARD_LIFECYCLE_EVENTS on', () => {
  let world: E2eWorld;
  let storefront: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI=true but no Chromium at ${CHROMIUM_PATH}: .ci/run must install it (scripts/ci/ensure-chromium.sh)`);
    const storefrontPort = await freePort();
    world = await startE2eWorld('browser-lifecycle', {
      allowedOrigins: [`http://127.0.0.1:${storefrontPort}`],
      extraEnv: { CARD_LIFECYCLE_EVENTS: 'refunds,disputes,reviews' },
    });
    // As npm run dev starts it: the storefront's server holds the Stripe webhook secret, the page never does.
    storefront = await startStorefront({
      serviceUrl: world.service.url,
      tokenSecret: DEMO_SECRETS.checkoutTokenSecret,
      stripe: { url: world.standIns.stripe.url, publishableKey: DEMO_SECRETS.stripePublishableKey },
      woocommerceUrl: world.woocommerceUrl,
      shippingWebhookSecret: DEMO_SECRETS.shippingWebhookSecret,
      stripeWebhookSecret: DEMO_SECRETS.stripeWebhookSecret,
      port: storefrontPort,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await storefront?.close();
    await world?.close();
  });

  async function paidOrder(orderId: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    await page.goto(`${storefront.url}/?order=${orderId}`);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    expect(await page.content()).not.toContain(DEMO_SECRETS.stripeWebhookSecret);
    await page.click('#pay-card');
    expect(await finalStatus(page)).toEqual({ state: 'ok', text: `Payment received: order #${orderId} is now processing.` });
    return page;
  }

  async function finalStatus(page: Page): Promise<{ state: string; text: string }> {
    const status = page.locator('#status:not([data-state="working"]):not([data-state="idle"])');
    await status.waitFor({ timeout: 30_000 });
    return { state: (await status.getAttribute('data-state')) ?? '', text: await status.innerText() };
  }

  async function press(page: Page, button: string): Promise<{ state: string; text: string }> {
    await page.evaluate(() => {
      document.getElementById('status')!.dataset.state = 'working';
    });
    await page.click(button);
    return finalStatus(page);
  }

  const orderState = async (id: number) => (await fetch(`${world.woocommerceUrl}/demo/orders/${id}`)).json();
  const timeline = (page: Page) => page.locator('#timeline').innerText();

  it('a partial refund keeps the order processing; refunding the rest makes it refunded, all on the timeline', async () => {
    const page = await paidOrder(1001);

    await page.fill('#refund-amount', '10.00');
    expect(await press(page, '#refund')).toEqual({ state: 'ok', text: 'Refund of 10.00 USD recorded: order #1001 is now processing.' });
    let order = await orderState(1001);
    expect(order.status).toBe('processing');
    expect(order.refunds.map((r: { amount: string }) => r.amount)).toEqual(['10.00']);
    await page.locator('#timeline', { hasText: 'Refund #' }).waitFor();
    expect(await timeline(page)).toMatch(/Refund recorded\s+Refund #\d+: 10\.00 USD/);
    expect(await page.locator('#order-status').innerText()).toBe('processing');
    expect(await page.locator('#order-lines').innerText()).toMatch(/Total\s+45\.00 USD\s+Refund #\d+\s+−10\.00 USD/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-1-partial-refund.png'), fullPage: true });

    expect(await press(page, '#refund')).toEqual({ state: 'ok', text: 'Refund of 35.00 USD recorded: order #1001 is now refunded.' });
    order = await orderState(1001);
    expect(order.status).toBe('refunded');
    expect(order.refunds.map((r: { amount: string }) => r.amount)).toEqual(['10.00', '35.00']);
    await page.locator('#order-status', { hasText: 'refunded' }).waitFor();
    await page.locator('#timeline', { hasText: 'processing → refunded' }).waitFor();
    expect(await timeline(page)).toMatch(/Status processing → refunded\s+Refund #\d+: 35\.00 USD/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-2-refunded.png'), fullPage: true });

    // Nothing remains: Stripe refuses, the page says so, the order is unchanged.
    const refused = await press(page, '#refund');
    expect(refused.state).toBe('error');
    expect(refused.text).toMatch(/greater than unrefunded amount/);
    expect((await orderState(1001)).refunds).toHaveLength(2);
    await page.close();
  });

  it('a dispute puts the order on hold with a private note; won, it is processing again', async () => {
    const page = await paidOrder(1002);

    const opened = await press(page, '#dispute');
    expect(opened.state).toBe('ok');
    expect(opened.text).toMatch(/^Dispute dp_\w+ opened: order #1002 is now on-hold\.$/);
    let order = await orderState(1002);
    expect(order.status).toBe('on-hold');
    expect(order.notes.some((n: { note: string; customer_note: boolean }) => !n.customer_note && n.note.includes('opened'))).toBe(true);
    await page.locator('#order-status', { hasText: 'on-hold' }).waitFor();
    await page.locator('#timeline', { hasText: 'Private note for the shop' }).waitFor();
    expect(await timeline(page)).toMatch(/Private note for the shop: “Stripe dispute dp_\w+ opened/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-3-disputed.png'), fullPage: true });

    const won = await press(page, '#dispute-won');
    expect(won.state).toBe('ok');
    expect(won.text).toMatch(/^Dispute dp_\w+ won: order #1002 is now processing\.$/);
    order = await orderState(1002);
    expect(order.status).toBe('processing');
    expect(order.meta._dispute_status).toBe('won');
    await page.locator('#timeline', { hasText: 'on-hold → processing' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-4-dispute-won.png'), fullPage: true });

    // No dispute open any more: the page says so and nothing changes.
    const again = await press(page, '#dispute-lost');
    expect(again).toEqual({ state: 'error', text: 'No open dispute on order 1002: open one first.' });
    expect((await orderState(1002)).status).toBe('processing');
    await page.close();
  });

  it('a refund from the shop admin goes through the companion plugin to the service and Stripe, recorded once', async () => {
    const page = await paidOrder(1005);

    await page.fill('#refund-amount', '7.50');
    const done = await press(page, '#admin-refund');
    expect(done.state).toBe('ok');
    expect(done.text).toMatch(/^Refunded from the shop admin: 7\.50 EUR, Stripe refund re_\w+: order #1005 is now processing\.$/);
    // Stripe's charge.refunded followed (the storefront's server delivered it): the service found the
    // refund WooCommerce holds and recorded no second one.
    const order = await orderState(1005);
    expect(order.refunds.map((r: { amount: string }) => r.amount)).toEqual(['7.50']);
    const atStripe = [...world.standIns.stripe.model.refunds.values()].filter((r) => r.metadata.shop_refund_id === String(order.refunds[0].id));
    expect(atStripe.map((r) => r.amount)).toEqual([750]);
    await page.locator('#timeline', { hasText: 'Refund #' }).waitFor();
    expect(await timeline(page)).toMatch(/Refund recorded\s+Refund #\d+: 7\.50 EUR/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-5-admin-refund.png'), fullPage: true });
    await page.close();
  });

  it('a Radar review holds the order with a private note; approved, it is processing again', async () => {
    const page = await paidOrder(1003);

    const opened = await press(page, '#review');
    expect(opened.state).toBe('ok');
    expect(opened.text).toMatch(/^Radar review prv_\w+ opened: order #1003 is now on-hold\.$/);
    await page.locator('#timeline', { hasText: 'Stripe Radar review' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-6-radar-review.png'), fullPage: true });

    const approved = await press(page, '#review-approved');
    expect(approved.text).toMatch(/^Radar review prv_\w+ approved: order #1003 is now processing\.$/);
    expect((await orderState(1003)).status).toBe('processing');
    await page.close();
  });
});
