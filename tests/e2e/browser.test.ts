/**
 * In a real browser: Debian's Chromium, driven by playwright-core, loads the
 * demo storefront from an allowed origin and from a disallowed one; the page
 * calls the production build with `fetch` and a JSON body, so Chromium sends
 * the CORS preflight and enforces its answer. A recording proxy in front of
 * the service shows which requests actually arrived. Screenshots go to
 * test-artifacts/.
 *
 * Without Chromium the file is skipped with the reason, except under CI=true,
 * where a missing browser fails the run (.ci/run installs it).
 */
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningServer } from '@/scripts/stand-ins/http';
import {
  ARTIFACTS,
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  chromiumAvailable,
  startE2eWorld,
  startRecordingProxy,
  startStorefrontFor,
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
    allowedStorefront = await startStorefrontFor(proxy.url, storefrontPort);
    disallowedStorefront = await startStorefrontFor(proxy.url);
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

  it('on the allowed origin, Pay by card gets a payment intent after the preflight, and the order holds the addresses', async () => {
    const page = await openCheckout(allowedStorefront, 1001);
    await page.click('#pay-card');
    const status = await finalStatus(page);
    expect(status.state).toBe('ok');
    expect(status.text).toMatch(/Card payment ready: payment intent pi_\w+/);
    await page.screenshot({ path: join(ARTIFACTS, 'browser-allowed-origin-card.png'), fullPage: true });

    expect(arrived(allowedStorefront.url, '/api/payment-intent')).toEqual(['OPTIONS', 'POST']);
    const order = await orderState(1001);
    expect(order.status).toBe('pending');
    expect(order.meta._payment_intent_id).toMatch(/^pi_/);
    expect(status.text).toContain(order.meta._payment_intent_id);
    expect(order.billing).toMatchObject({ first_name: 'Grace', email: 'grace@example.com', phone: '+1 555 0100', country: 'US' });
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
