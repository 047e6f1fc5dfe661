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
 * play Stripe's side the same way. Each back-office button is enabled only when
 * its action applies and otherwise says why; each result shows beside its
 * action. A screenshot of each state goes to test-artifacts/, and a console
 * error the test did not provoke fails it.
 *
 * Last, `npm run dev` itself, as a newcomer starts it: from its banner, the
 * first card payment reaches `processing` within 3 s (every route compiled
 * before the banner).
 *
 * Without Chromium the file is skipped with the reason, except under CI=true,
 * where a missing browser fails the run (.ci/run installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { environmentWithoutServiceVariables, stopGroup } from '@/scripts/service-process';
import { DEMO_ORDERS, DEMO_SAVED_CARD_CUSTOMER_ID, DEMO_SECRETS } from '@/stand-ins/demo/world';
import { userMeta } from '@/stand-ins/woocommerce/customers';
import { freePort, type RunningServer } from '@/stand-ins/loopback-http';
import { startStorefront } from '@/stand-ins/demo/storefront';
import {
  ARTIFACTS,
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  chromiumAvailable,
  startE2eWorld,
  startDemoStorefrontFor,
  startRecordingProxy,
  watchConsole,
  type E2eWorld,
  type RecordingProxy,
} from '../support/e2e';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const haveBrowser = chromiumAvailable();
if (!haveBrowser && !inCi) {
  process.stderr.write(`[e2e] browser test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)\n`);
}

const VIEWPORT = { width: 900, height: 1000 };
const SHOP_DATE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;

async function finalStatus(page: Page, line = '#status'): Promise<{ state: string; text: string }> {
  const status = page.locator(`${line}:not([data-state="working"]):not([data-state="idle"])`);
  await status.waitFor({ timeout: 30_000 });
  return { state: (await status.getAttribute('data-state')) ?? '', text: await status.innerText() };
}

/** Clicks a button and waits for the result beside it; the line is marked working first, so a stale result never counts. */
async function press(page: Page, button: string, line: string): Promise<{ state: string; text: string }> {
  await page.evaluate((id) => {
    document.querySelector<HTMLElement>(id)!.dataset.state = 'working';
  }, line);
  await page.click(button);
  return finalStatus(page, line);
}

/** Whether the element is inside the browser window, where the reader's eyes are after the click. */
const inView = (page: Page, selector: string) =>
  page.evaluate((s) => {
    const box = document.querySelector(s)!.getBoundingClientRect();
    // Within a pixel: scrolling to the window's edge leaves a fraction of a pixel when the layout is in fractions.
    return box.height > 0 && box.top >= -1 && box.bottom <= window.innerHeight + 1;
  }, selector);

/** A back-office button's state as the reader sees it: enabled, or disabled with its visible reason (also its title). */
async function button(page: Page, id: string, why: string): Promise<{ enabled: boolean; why: string }> {
  const enabled = await page.locator(`#${id}`).isEnabled();
  const title = (await page.locator(`#${id}`).getAttribute('title')) ?? '';
  const shown = await page.locator(`#${why}`).innerText();
  if (!enabled) expect(title).toBe(shown);
  return { enabled, why: shown };
}

describe.skipIf(!haveBrowser && !inCi)('storefront checkout in Chromium', () => {
  let world: E2eWorld;
  let proxy: RecordingProxy;
  let allowedStorefront: RunningServer;
  let disallowedStorefront: RunningServer;
  let browser: Browser;
  let consoleWatch: ReturnType<typeof watchConsole> | undefined;

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

  afterEach(() => {
    const errors = consoleWatch?.unexpected() ?? [];
    consoleWatch = undefined;
    expect(errors, 'console errors on the page').toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([allowedStorefront?.close(), disallowedStorefront?.close(), proxy?.close()]);
    await world?.close();
  });

  async function open(storefront: RunningServer, query: string): Promise<Page> {
    const page = await browser.newPage({ viewport: VIEWPORT });
    consoleWatch = watchConsole(page);
    await page.goto(`${storefront.url}/${query}`);
    return page;
  }

  async function openCheckout(storefront: RunningServer, orderId: number): Promise<Page> {
    const page = await open(storefront, `?order=${orderId}`);
    await page.locator('#order-title', { hasText: `#${orderId}` }).waitFor();
    return page;
  }

  const orderState = async (id: number) => (await fetch(`${world.woocommerceUrl}/demo/orders/${id}`)).json();
  const arrived = (origin: string, path: string) =>
    proxy.requests.filter((r) => r.origin === origin && r.path === path).map((r) => r.method);

  const timeline = (page: Page) => page.locator('#timeline').innerText();

  it('without an order, the page lists the demo orders with their state, each a link to its checkout', async () => {
    const page = await open(allowedStorefront, '');
    const rows = page.locator('#orders tbody tr');
    expect(await rows.count()).toBe(DEMO_ORDERS.length);
    expect(await rows.first().innerText()).toMatch(/#1001\s+guest order\s+pending\s+45\.00 USD/);
    expect(await page.locator('#orders').innerText()).toMatch(/#1004\s+paid by card before the demo started[^\n]*\s+processing\s+30\.00 USD/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-0-orders.png'), fullPage: true });
    await page.click('a[href="/?order=1003"]');
    await page.locator('#order-title', { hasText: '#1003' }).waitFor();
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    await page.close();
  });

  it('an order the shop does not hold is said to be missing, and so is a number that is no order, with no error in the console', async () => {
    // No failed load either: the afterEach finds no console error.
    const page = await open(allowedStorefront, '?order=9999');
    expect(await page.locator('#notice').innerText()).toBe('Order #9999 does not exist in the shop. Pick one of the demo orders.');
    expect(await page.locator('#orders tbody tr').count()).toBe(DEMO_ORDERS.length);
    expect(await page.locator('#checkout').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-0-unknown-order.png'), fullPage: true });
    await page.goto(`${allowedStorefront.url}/?order=abc`);
    expect(await page.locator('#notice').innerText()).toBe('“abc” is not an order number. Pick one of the demo orders.');
    await page.close();
  });

  it('on the allowed origin, the order goes pending → processing → shipped on the page alone, each date with its zone', async () => {
    const page = await openCheckout(allowedStorefront, 1001);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    expect(await page.locator('#order-lines').innerText()).toMatch(/Organic cotton T-shirt × 2\s+40\.00 USD[\s\S]*Shipping\s+5\.00 USD[\s\S]*Total\s+45\.00 USD/);
    expect(await page.locator('#fact-placed').innerText()).toMatch(SHOP_DATE);
    expect(await page.locator('#fact-paid').innerText()).toBe('not yet');
    // Nothing to ship yet, and the page says why.
    expect(await button(page, 'ship', 'ship-why')).toEqual({ enabled: false, why: 'Only a paid order in processing is shipped; this one is pending.' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-1-pending.png'), fullPage: true });

    const paid = await press(page, '#pay-card', '#status');
    expect(paid).toEqual({ state: 'ok', text: 'Payment received: order #1001 is now processing.' });
    expect(await inView(page, '#status')).toBe(true);
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
    // The paid date as the shop holds it, with its zone (WooCommerce stamped it at processing: no `_date_paid` write for a T-shirt).
    const paidOn = (await page.locator('#fact-paid').innerText()).split(' — ');
    expect(paidOn[0]).toMatch(SHOP_DATE);
    expect(paidOn[1]).toBe(`Credit Card (cardprovider), transaction ${order.transaction_id}`);
    expect(await timeline(page)).not.toContain('_date_paid');
    for (const time of await page.locator('#timeline time').allInnerTexts()) expect(time).toMatch(SHOP_DATE);
    expect(await button(page, 'ship', 'ship-why')).toEqual({ enabled: true, why: '' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-2-processing.png'), fullPage: true });

    const shipped = await press(page, '#ship', '#office-status');
    expect(shipped.state).toBe('ok');
    expect(shipped.text).toMatch(/^Shipped: Your order has been shipped! Tracking Number: 1Z\w+ \| Carrier: UPS/);
    // The result sits beside the button that asked for it, in view.
    expect(await inView(page, '#office-status')).toBe(true);
    expect(proxy.requests.some((r) => r.method === 'POST' && r.path === '/api/shipping/webhook')).toBe(true);
    order = await orderState(1001);
    expect(order.status).toBe('shipped');
    expect(order.meta._tracking_number).toMatch(/^1Z/);
    await page.locator('#order-status', { hasText: 'shipped' }).waitFor();
    await page.locator('#timeline', { hasText: 'processing → shipped' }).waitFor();
    expect(await timeline(page)).toContain('Note to the customer: “Your order has been shipped!');
    expect(await button(page, 'ship', 'ship-why')).toEqual({ enabled: false, why: 'Already shipped.' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-3-shipped.png'), fullPage: false });
    await page.close();
  });

  it('at a phone’s 390 px, no page scrolls sideways: the order list, a missing order, a checkout with its timeline', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    consoleWatch = watchConsole(page);
    // Order 1001 after the test above: paid and shipped, its timeline full of long meta values.
    for (const query of ['', '?order=9999', '?order=1001']) {
      await page.goto(`${allowedStorefront.url}/${query}`);
      if (query === '?order=1001') await page.locator('#timeline li').nth(1).waitFor();
      const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      expect(width, `page /${query}`).toEqual({ scroll: 390, client: 390 });
    }
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-narrow-390.png'), fullPage: true });
    await page.close();
  });

  it('a call slower than a second shows the seconds it has taken', async () => {
    const page = await openCheckout(allowedStorefront, 1006);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    const held = proxy.holdNext('POST', '/api/payment-intent');
    await page.click('#pay-card');
    await held.arrived;
    await page.locator('#status', { hasText: /POST \/api\/payment-intent\) … 1 s$/ }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-slow-call.png'), fullPage: false });
    held.release();
    expect(await finalStatus(page)).toEqual({ state: 'ok', text: 'Payment received: order #1006 is now processing.' });
    await page.close();
  });

  it('on the allowed origin, a declined card leaves the order pending and the page shows the failure note', async () => {
    const page = await openCheckout(allowedStorefront, 1002);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    await page.check('input[name="card"][value="pm_card_chargeDeclined"]');
    // Stripe answers a declined card with 402, as Stripe.js sees it.
    consoleWatch?.allow(/status of 402/);
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

  it('on the allowed origin, the wallet pays the order: the shop’s rates at the wallet’s address, the rate chosen, exactly the order’s total', async () => {
    const page = await openCheckout(allowedStorefront, 1007);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    const sheet = page.getByRole('dialog', { name: 'Wallet (Stripe.js stand-in)' });
    const total = sheet.getByLabel('Wallet total');
    await page.getByRole('button', { name: 'Pay with wallet (Stripe.js stand-in)' }).click();
    // The wallet opens on Toronto: one taxed flat rate there, written to the order by the service.
    await expect.poll(() => total.textContent()).toBe('Total $56.50');
    expect(await finalStatus(page, '#wallet-status')).toEqual({
      state: 'ok',
      text: '1 rate(s) at Toronto, ON, M5V, CA: Flat rate 11.30 USD. Flat rate written to the order (POST /api/express-checkout/shipping-rate): total 56.50 USD.',
    });
    await sheet.getByLabel('Wallet shipping address').selectOption({ label: 'New York, United States' });
    await expect.poll(() => total.textContent()).toBe('Total $55.00');
    expect(await sheet.getByRole('radio').evaluateAll((radios) => radios.map((radio) => radio.parentElement!.textContent!.trim()))).toEqual([
      'Flat rate $15.00',
      'Express $30.00',
    ]);
    await sheet.getByRole('radio', { name: /Express/ }).check();
    await expect.poll(() => total.textContent()).toBe('Total $70.00');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-wallet-sheet.png'), fullPage: true });
    expect(await orderState(1007)).toMatchObject({ total: '70.00', shipping_total: '30.00' });

    const paid = await press(page, 'role=button[name="Pay in wallet"]', '#wallet-status');
    expect(paid).toEqual({ state: 'ok', text: 'Paid with the wallet: 70.00 USD, the order’s total; order #1007 is now processing.' });
    const order = await orderState(1007);
    expect(order).toMatchObject({ status: 'processing', total: '70.00', shipping: { city: 'New York', address_1: '1 Harbor Way' }, billing: { email: 'grace@example.com' } });
    expect(world.standIns.stripe.model.retrieve(order.meta._payment_intent_id as string)).toMatchObject({ amount: 7000, status: 'succeeded' });
    expect(arrived(allowedStorefront.url, '/api/express-checkout/shipping-rates').filter((m) => m === 'POST')).toHaveLength(2);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-wallet-paid.png'), fullPage: true });
    await page.close();
  });

  it('on the allowed origin, a registered customer saves the card on one order, sees it listed on the next and pays with it', async () => {
    const first = await openCheckout(allowedStorefront, 1008);
    await first.locator('#order-status', { hasText: 'pending' }).waitFor();
    expect(await press(first, '#show-saved', '#status')).toEqual({ state: 'ok', text: 'No saved card yet: tick “Save this card” when you pay.' });
    await first.check('#save-card');
    expect(await press(first, '#pay-card', '#status')).toEqual({ state: 'ok', text: 'Payment received: order #1008 is now processing.' });
    const stripeCustomer = userMeta(world.standIns.woocommerce.model, DEMO_SAVED_CARD_CUSTOMER_ID, '_stripe_customer_id') as string;
    const [saved] = world.standIns.stripe.model.customers.list(stripeCustomer);
    expect(saved).toMatchObject({ card: { brand: 'visa', last4: '4242' } });
    await first.close();

    const second = await openCheckout(allowedStorefront, 1009);
    await second.locator('#order-status', { hasText: 'pending' }).waitFor();
    expect(await press(second, '#show-saved', '#status')).toEqual({
      state: 'ok',
      text: `1 saved card(s) of customer #${DEMO_SAVED_CARD_CUSTOMER_ID}, listed first: pay with one.`,
    });
    expect(await second.getByRole('radio', { name: 'Saved visa •••• 4242' }).isChecked()).toBe(true);
    await second.screenshot({ path: join(ARTIFACTS, 'browser-order-saved-card.png'), fullPage: true });
    expect(await press(second, '#pay-card', '#status')).toEqual({ state: 'ok', text: 'Payment received: order #1009 is now processing.' });
    const order = await orderState(1009);
    expect(world.standIns.stripe.model.retrieve(order.meta._payment_intent_id as string)).toMatchObject({
      status: 'succeeded',
      customer: stripeCustomer,
      payment_method: saved!.id,
      amount: 2500,
    });
    await second.close();
  });

  it('on the allowed origin, Pay manually submits the order and shows its total', async () => {
    const page = await openCheckout(allowedStorefront, 1005);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    await page.click('#submit-manual');
    const status = await finalStatus(page);
    expect(status.state).toBe('ok');
    expect(status.text).toContain('Order #1005 submitted for manual payment: 27.50 EUR');
    const order = await orderState(1005);
    expect(order.meta._manual_payment_status).toBe('pending-screenshot');
    expect(order.payment_method).toBe('manual');
    await page.locator('#timeline', { hasText: '_manual_payment_status' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-allowed-origin-manual.png'), fullPage: true });
    await page.close();
  });

  it('on an already paid order the page shows the refusal, and the back office offers shipping', async () => {
    const page = await openCheckout(allowedStorefront, 1004);
    await page.locator('#order-status', { hasText: 'processing' }).waitFor();
    expect(await page.locator('#fact-paid').innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC — Credit Card \(cardprovider\), transaction ch_/);
    expect(await button(page, 'ship', 'ship-why')).toEqual({ enabled: true, why: '' });
    consoleWatch?.allow(/status of 400/);
    await page.click('#pay-card');
    expect(await finalStatus(page)).toEqual({ state: 'error', text: 'HTTP 400: Order cannot be paid' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-order-paid-refused.png'), fullPage: false });
    await page.close();
  });

  it('on a disallowed origin the browser blocks the call: only the preflight arrives and the order is untouched', async () => {
    const before = await orderState(1003);
    const page = await openCheckout(disallowedStorefront, 1003);
    // Chromium reports the blocked call itself.
    consoleWatch?.allow(/CORS policy|net::ERR_FAILED/);
    await page.click('#pay-card');
    const status = await finalStatus(page);
    expect(status.state).toBe('blocked');
    expect(status.text).toContain('Blocked by the browser');
    await page.screenshot({ path: join(ARTIFACTS, 'browser-disallowed-origin.png'), fullPage: false });

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
  let consoleWatch: ReturnType<typeof watchConsole> | undefined;

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
      demoOrders: DEMO_ORDERS,
      port: storefrontPort,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  });

  afterEach(() => {
    const errors = consoleWatch?.unexpected() ?? [];
    consoleWatch = undefined;
    expect(errors, 'console errors on the page').toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await storefront?.close();
    await world?.close();
  });

  async function openOrder(orderId: number, status: string): Promise<Page> {
    const page = await browser.newPage({ viewport: VIEWPORT });
    consoleWatch = watchConsole(page);
    await page.goto(`${storefront.url}/?order=${orderId}`);
    await page.locator('#order-status', { hasText: status }).waitFor();
    expect(await page.content()).not.toContain(DEMO_SECRETS.stripeWebhookSecret);
    return page;
  }

  async function paidOrder(orderId: number): Promise<Page> {
    const page = await openOrder(orderId, 'pending');
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: false, why: 'Not paid by card yet: Stripe holds nothing to refund.' });
    expect(await button(page, 'dispute', 'dispute-why')).toEqual({ enabled: false, why: 'Not paid by card yet: Stripe holds nothing to dispute.' });
    expect(await press(page, '#pay-card', '#status')).toEqual({ state: 'ok', text: `Payment received: order #${orderId} is now processing.` });
    await page.locator('#order-status', { hasText: 'processing' }).waitFor();
    return page;
  }

  /** No stand-in's address and no internal message on the page. */
  async function plainPage(page: Page): Promise<void> {
    const text = await page.locator('body').innerText();
    for (const url of [world.standIns.stripe.url, world.woocommerceUrl]) expect(text).not.toContain(url.replace(/^http:\/\//, ''));
    expect(text).not.toMatch(/HTTP 5\d\d|→ HTTP|No such payment_intent|unrefunded amount on charge/);
  }

  const orderState = async (id: number) => (await fetch(`${world.woocommerceUrl}/demo/orders/${id}`)).json();
  const timeline = (page: Page) => page.locator('#timeline').innerText();

  it('a partial refund keeps the order processing; refunding the rest makes it refunded, and then nothing is left to refund', async () => {
    const page = await paidOrder(1001);
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: true, why: 'Up to 45.00 USD.' });

    // More than remains: the page says so before asking anyone.
    await page.fill('#refund-amount', '50.00');
    expect(await press(page, '#refund', '#office-status')).toEqual({ state: 'error', text: 'At most 45.00 USD remains to refund.' });

    await page.fill('#refund-amount', '10.00');
    expect(await press(page, '#refund', '#office-status')).toEqual({ state: 'ok', text: 'Refund of 10.00 USD recorded: order #1001 is now processing.' });
    expect(await inView(page, '#office-status')).toBe(true);
    let order = await orderState(1001);
    expect(order.status).toBe('processing');
    expect(order.refunds.map((r: { amount: string }) => r.amount)).toEqual(['10.00']);
    await page.locator('#timeline', { hasText: 'Refund #' }).waitFor();
    expect(await timeline(page)).toMatch(/Refund recorded\s+Refund #\d+: 10\.00 USD/);
    expect(await page.locator('#order-lines').innerText()).toMatch(/Total\s+45\.00 USD\s+Refund #\d+\s+−10\.00 USD/);
    expect(await page.locator('#fact-refunded').innerText()).toBe('10.00 USD of 45.00 USD');
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: true, why: 'Up to 35.00 USD.' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-1-partial-refund.png'), fullPage: true });

    expect(await press(page, '#refund', '#office-status')).toEqual({ state: 'ok', text: 'Refund of 35.00 USD recorded: order #1001 is now refunded.' });
    order = await orderState(1001);
    expect(order.status).toBe('refunded');
    expect(order.refunds.map((r: { amount: string }) => r.amount)).toEqual(['10.00', '35.00']);
    await page.locator('#order-status', { hasText: 'refunded' }).waitFor();
    await page.locator('#timeline', { hasText: 'processing → refunded' }).waitFor();
    expect(await timeline(page)).toMatch(/Status processing → refunded\s+Refund #\d+: 35\.00 USD/);

    // Nothing remains: the buttons say so instead of letting Stripe refuse.
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: false, why: 'Fully refunded: nothing left to refund.' });
    expect(await button(page, 'dispute', 'dispute-why')).toEqual({ enabled: false, why: 'Fully refunded: nothing left to dispute.' });
    expect(await button(page, 'ship', 'ship-why')).toEqual({ enabled: false, why: 'Only a paid order in processing is shipped; this one is refunded.' });
    await plainPage(page);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-2-refunded.png'), fullPage: true });
    await page.close();
  });

  it('a dispute puts the order on hold with a private note; won, it is processing again', async () => {
    const page = await paidOrder(1002);
    expect(await button(page, 'dispute-won', 'dispute-outcome-why')).toEqual({ enabled: false, why: 'No open dispute: its outcome comes after a Dispute.' });

    const opened = await press(page, '#dispute', '#office-status');
    expect(opened.state).toBe('ok');
    expect(opened.text).toMatch(/^Dispute dp_\w+ opened: order #1002 is now on-hold\.$/);
    let order = await orderState(1002);
    expect(order.status).toBe('on-hold');
    expect(order.notes.some((n: { note: string; customer_note: boolean }) => !n.customer_note && n.note.includes('opened'))).toBe(true);
    await page.locator('#order-status', { hasText: 'on-hold' }).waitFor();
    await page.locator('#timeline', { hasText: 'Private note for the shop' }).waitFor();
    expect(await timeline(page)).toMatch(/Private note for the shop: “Stripe dispute dp_\w+ opened/);
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: false, why: 'Disputed: Stripe refunds nothing while the dispute is open.' });
    expect(await button(page, 'dispute-won', 'dispute-outcome-why')).toEqual({ enabled: true, why: '' });
    expect(await button(page, 'ship', 'ship-why')).toEqual({ enabled: false, why: 'Only a paid order in processing is shipped; this one is on-hold.' });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-3-disputed.png'), fullPage: true });

    const won = await press(page, '#dispute-won', '#office-status');
    expect(won.state).toBe('ok');
    expect(won.text).toMatch(/^Dispute dp_\w+ won: order #1002 is now processing\.$/);
    order = await orderState(1002);
    expect(order.status).toBe('processing');
    expect(order.meta._dispute_status).toBe('won');
    await page.locator('#timeline', { hasText: 'on-hold → processing' }).waitFor();

    // Closed: no outcome to give, no second dispute; a refund applies again.
    expect(await button(page, 'dispute-lost', 'dispute-outcome-why')).toEqual({ enabled: false, why: 'No open dispute: its outcome comes after a Dispute.' });
    expect(await button(page, 'dispute', 'dispute-why')).toEqual({ enabled: false, why: 'Already disputed (won): a payment is disputed once.' });
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: true, why: 'Up to 89.50 USD.' });
    await plainPage(page);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-4-dispute-won.png'), fullPage: true });
    await page.close();
  });

  it('the order seeded as paid works with every back-office button: refund, dispute, lost', async () => {
    const page = await openOrder(1004, 'processing');
    for (const [id, why] of [['ship', 'ship-why'], ['refund', 'refund-why'], ['dispute', 'dispute-why']] as const) {
      expect((await button(page, id, why)).enabled).toBe(true);
    }
    await page.fill('#refund-amount', '10.00');
    expect(await press(page, '#refund', '#office-status')).toEqual({ state: 'ok', text: 'Refund of 10.00 USD recorded: order #1004 is now processing.' });

    const opened = await press(page, '#dispute', '#office-status');
    expect(opened.text).toMatch(/^Dispute dp_\w+ opened: order #1004 is now on-hold\.$/);
    const lost = await press(page, '#dispute-lost', '#office-status');
    expect(lost.text).toMatch(/^Dispute dp_\w+ lost: order #1004 is now failed\.$/);
    expect((await orderState(1004)).status).toBe('failed');
    await page.locator('#order-status', { hasText: 'failed' }).waitFor();
    expect(await button(page, 'refund', 'refund-why')).toEqual({ enabled: false, why: 'The dispute was lost: the bank already gave the money back.' });
    expect(await page.locator('#fact-dispute').innerText()).toMatch(/^dp_\w+ \(lost\)$/);
    await plainPage(page);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-5-seeded-paid-dispute-lost.png'), fullPage: true });
    await page.close();
  });

  it('a refund from the shop admin goes through the companion plugin to the service and Stripe, recorded once', async () => {
    const page = await paidOrder(1005);
    expect(await button(page, 'admin-refund', 'admin-refund-why')).toEqual({ enabled: true, why: '' });

    await page.fill('#refund-amount', '7.50');
    const done = await press(page, '#admin-refund', '#office-status');
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
    await plainPage(page);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-6-admin-refund.png'), fullPage: true });
    await page.close();
  });

  it('a result line is cleared once the order’s status changes, and the order list shows the status it has now', async () => {
    const page = await paidOrder(1006);
    // "Payment received: … now processing" stays true while the order is processing, and no longer once it is on hold.
    const opened = await press(page, '#dispute', '#office-status');
    expect(opened.text).toMatch(/^Dispute dp_\w+ opened: order #1006 is now on-hold\.$/);
    await page.locator('#order-status', { hasText: 'on-hold' }).waitFor();
    expect({ state: await page.locator('#status').getAttribute('data-state'), text: await page.locator('#status').innerText() }).toEqual({ state: 'idle', text: '' });
    expect(await page.locator('#status').isVisible()).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-stale-line-cleared.png'), fullPage: false });

    await page.goto(`${storefront.url}/`);
    expect(await page.locator('#orders tr', { hasText: '#1006' }).innerText()).toMatch(/^#1006\s+guest order of e-books only[^\n]*\s+on-hold\s+12\.00 USD$/);
    await page.close();
  });

  it('a Radar review holds the order with a private note; approved, it is processing again', async () => {
    const page = await paidOrder(1003);
    expect(await button(page, 'review-approved', 'review-why')).toEqual({ enabled: false, why: 'No open review: a Radar review comes first.' });

    const opened = await press(page, '#review', '#office-status');
    expect(opened.state).toBe('ok');
    expect(opened.text).toMatch(/^Radar review prv_\w+ opened: order #1003 is now on-hold\.$/);
    await page.locator('#timeline', { hasText: 'Stripe Radar review' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'browser-lifecycle-7-radar-review.png'), fullPage: true });

    const approved = await press(page, '#review-approved', '#office-status');
    expect(approved.text).toMatch(/^Radar review prv_\w+ approved: order #1003 is now processing\.$/);
    expect((await orderState(1003)).status).toBe('processing');
    await plainPage(page);
    await page.close();
  });
});

/** The .env files `next dev` would read from this tree: a developer's own would change what npm run dev does. */
const ownEnvFiles = ['.env', '.env.local', '.env.development', '.env.development.local'].filter((file) => existsSync(file));
if (ownEnvFiles.length > 0 && !inCi) {
  process.stderr.write(`[e2e] npm run dev test skipped: this tree has ${ownEnvFiles.join(', ')}, which npm run dev would read\n`);
}

/**
 * `npm run dev` as a newcomer starts it, with .env.example's values as if copied and not filled in: the
 * demo runs (and says why), and from its banner the first card payment on the page reaches processing
 * within 3 s. It writes .demo/state.json like any demo run, and wants this tree's `next dev` to itself.
 */
describe.skipIf((!haveBrowser && !inCi) || (ownEnvFiles.length > 0 && !inCi))('npm run dev: the first payment answers at once', () => {
  let child: ChildProcess;
  let exited: Promise<unknown>;
  let output = '';
  let bannerAt = 0;
  let browser: Browser;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI=true but no Chromium at ${CHROMIUM_PATH}: .ci/run must install it (scripts/ci/ensure-chromium.sh)`);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    // The reader's browser is open before the banner; what is measured is the service's part.
    page = await browser.newPage({ viewport: VIEWPORT });
    consoleWatch = watchConsole(page);
    const example = Object.fromEntries(
      readFileSync('.env.example', 'utf8')
        .split('\n')
        .map((line) => /^([A-Z0-9_]+)=(.+)$/.exec(line.trim()))
        .filter((match): match is RegExpExecArray => match !== null)
        .map((match) => [match[1] as string, match[2] as string]),
    );
    child = spawn('npm', ['run', 'dev'], {
      env: { ...environmentWithoutServiceVariables(), ...example, NODE_ENV: 'development', PORT: String(await freePort()), NEXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    exited = new Promise((resolve) => child.once('exit', resolve));
    const seen = (text: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!text.test(output)) return;
          if (!bannerAt && output.includes('Checkout service demo is running')) bannerAt = Date.now();
          resolve();
        };
        child.stdout?.on('data', check);
        child.stderr?.on('data', check);
        child.once('exit', (code) => reject(new Error(`npm run dev exited (${code}) before ${text}:\n${output.slice(-3000)}`)));
        check();
      });
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    // The storefront is up before the service: the reader has it open while the service starts.
    await seen(/Storefront {2}http:\/\/\S+\//);
    await page.goto(/Storefront {2}(http:\/\/\S+\/)/.exec(output)?.[1] as string);
    await seen(/Checkout service demo is running/);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (child) await stopGroup(child, exited);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'e2e-npm-run-dev.log'), output);
  });

  it('says it runs the demo because nothing is configured, naming the example’s placeholders', () => {
    expect(output).toContain('Demo mode: no WooCommerce or Stripe is configured');
    expect(output).toContain("these variables still hold the example's placeholders: WOOCOMMERCE_URL, ALLOWED_ORIGINS (the environment)");
    // Every route was compiled before the banner.
    const beforeBanner = output.slice(0, output.indexOf('Checkout service demo is running'));
    expect(beforeBanner).toMatch(/Routes ready in \d+\.\d s\./);
  });

  it('from the banner, the first card payment on the page reaches processing within 3 s', async () => {
    const storefrontUrl = /Storefront \(allowed origin\):\s+(http:\/\/\S+)\/\?order=1001/.exec(output)?.[1];
    expect(storefrontUrl).toBeDefined();
    const clickedAt = await (async () => {
      await page.goto(`${storefrontUrl}/?order=1001`);
      await page.locator('#order-status', { hasText: 'pending' }).waitFor();
      const at = Date.now();
      await page.click('#pay-card');
      return at;
    })();
    expect(await finalStatus(page)).toEqual({ state: 'ok', text: 'Payment received: order #1001 is now processing.' });
    const done = Date.now();
    // The same steps again, on a server that has served a payment: what this machine takes anyway.
    await page.goto(`${storefrontUrl}/?order=1002`);
    await page.locator('#order-status', { hasText: 'pending' }).waitFor();
    const secondClick = Date.now();
    await page.click('#pay-card');
    expect(await finalStatus(page)).toEqual({ state: 'ok', text: 'Payment received: order #1002 is now processing.' });
    const figures = { bannerToProcessingMs: done - bannerAt, clickToProcessingMs: done - clickedAt, secondClickToProcessingMs: Date.now() - secondClick };
    writeFileSync(join(ARTIFACTS, 'dev-first-payment.json'), `${JSON.stringify(figures, null, 2)}\n`);
    await page.screenshot({ path: join(ARTIFACTS, 'dev-first-payment.png'), fullPage: false });
    expect(figures.bannerToProcessingMs, JSON.stringify(figures)).toBeLessThan(3000);
    // Nothing was compiled for it: the compiler's notices all came before the banner.
    expect(output.slice(output.indexOf('Checkout service demo is running'))).not.toMatch(/Compiling/);
    expect(consoleWatch.unexpected()).toEqual([]);
  });
});
