/**
 * examples/next-storefront as a storefront developer runs it: `next build` of a copy laid out as
 * `npm install` leaves it (the client copied in from ../../client, the other packages the service's own),
 * then `next start` against the stand-ins and the service's production build. In Chromium, a cart
 * becomes a pending order on the example's server, the address reaches the service with the token
 * that server minted, the example's Payment Element code confirms with a stand-in of Stripe.js (served
 * in place of js.stripe.com, which this machine does not reach), and after Stripe's webhook the return
 * page shows the order paid.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '@/scripts/build-client';
import { environmentWithoutServiceVariables, stopGroup } from '@/scripts/service-process';
import { DEMO_CUSTOMER_ID, DEMO_SECRETS } from '@/stand-ins/demo/world';
import { userMeta } from '@/stand-ins/woocommerce/customers';
import { stripeJsStandIn } from '@/stand-ins/stripe/stripe-js';
import { freePort, LOOPBACK } from '@/stand-ins/loopback-http';
import { ARTIFACTS, CHROMIUM_ARGS, CHROMIUM_PATH, chromiumAvailable, startE2eWorld, type E2eWorld } from '../support/e2e';

const ROOT = process.cwd();
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const haveBrowser = chromiumAvailable();
if (!haveBrowser && !inCi) process.stderr.write(`[e2e] example storefront in the browser skipped: no Chromium at ${CHROMIUM_PATH}\n`);

// Inside the repository, so the copy and the hard links of node_modules share its file system.
const BUILD_DIR = join(ARTIFACTS, 'example-storefront-build');
const APP_DIR = join(BUILD_DIR, 'examples', 'next-storefront');
const nextBin = join(APP_DIR, 'node_modules', 'next', 'dist', 'bin', 'next');

let world: E2eWorld;
let origin: string;
let example: ChildProcess | undefined;
let exampleExited: Promise<unknown>;
let buildOutput = '';
let browser: Browser | undefined;

/** The example and its node_modules as `npm install` lays them out there (.npmrc install-links: the client a copy, not a link). */
async function layOut(): Promise<void> {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  cpSync(join(ROOT, 'examples', 'next-storefront'), APP_DIR, { recursive: true, filter: (source) => !/\/(node_modules|\.next)$/.test(source) });
  // Hard links: the service's packages (next, react, @stripe/*, the WooCommerce client) inside the app,
  // without copying a byte; Turbopack reads nothing outside the app's own root.
  execFileSync('cp', ['-al', realpathSync(join(ROOT, 'node_modules')), join(APP_DIR, 'node_modules')]);
  const client = join(APP_DIR, 'node_modules', '@checkout-service', 'storefront-client');
  mkdirSync(client, { recursive: true });
  cpSync(join(ROOT, 'client', 'package.json'), join(client, 'package.json'));
  await buildClient(join(client, 'dist'));
}

/** In a new page: a cart of two T-shirts checked out, the address sent to the service, the Payment Element shown. */
async function toPaymentElement(options: { saveCard?: boolean } = {}): Promise<{ page: Page; orderId: number }> {
  const page = await browser!.newPage();
  // Stripe.js comes from Stripe's servers, which this machine does not reach: its stand-in confirms at the Stripe stand-in.
  await page.route('https://js.stripe.com/**', (route) => route.fulfill({ contentType: 'text/javascript', body: stripeJsStandIn(world.standIns.stripe.url) }));
  await page.goto(`${origin}/`);
  await page.getByLabel(/Organic cotton T-shirt/).fill('2');
  await page.getByRole('button', { name: 'Check out' }).click();
  await page.waitForURL(/\/checkout\/\d+$/);
  const orderId = Number(/\/checkout\/(\d+)$/.exec(page.url())![1]);
  // Priced by the shop: 2 × 20.00 and the flat shipping.
  expect(world.standIns.woocommerce.model.get(orderId)).toMatchObject({ status: 'pending', total: '45.00' });
  for (const [label, value] of [
    ['First name', 'Ada'],
    ['Last name', 'Lovelace'],
    ['Address', '12 Analytical Row'],
    ['City', 'Toronto'],
    ['State / province', 'ON'],
    ['Postcode', 'M5V 2T6'],
    ['Country (2 letters)', 'CA'],
    ['Email', 'ada@example.com'],
  ] as const) {
    await page.getByLabel(label, { exact: true }).fill(value);
  }
  if (options.saveCard) await page.getByLabel('Save this card for my next order').check();
  const answer = page.waitForResponse((response) => response.url() === `${world.service.url}/api/payment-intent` && response.request().method() === 'POST');
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  const intent = (await (await answer).json()) as { payment_intent_id: string };
  // The service wrote the address with the token the example's server minted: WooCommerce taxed the order (13 % in Canada), and the intent is for the new total.
  expect(world.standIns.woocommerce.model.get(orderId)).toMatchObject({ total: '50.85', billing: { city: 'Toronto' } });
  expect(world.standIns.stripe.model.retrieve(intent.payment_intent_id)).toMatchObject({ amount: 5085, metadata: { shop_order_id: String(orderId) } });
  await page.getByLabel('Test card (Stripe.js stand-in)').waitFor();
  return { page, orderId };
}

beforeAll(async () => {
  const port = await freePort();
  origin = `http://${LOOPBACK}:${port}`;
  world = await startE2eWorld('example-storefront', { allowedOrigins: [origin] });
  await layOut();
  const env = { ...environmentWithoutServiceVariables(), NEXT_TELEMETRY_DISABLED: '1' };
  // NEXT_PUBLIC_* are written into the browser's code at build time.
  const publicEnv = { NEXT_PUBLIC_CHECKOUT_SERVICE_URL: world.service.url, NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY: DEMO_SECRETS.stripePublishableKey };
  buildOutput = execFileSync(process.execPath, [nextBin, 'build'], { cwd: APP_DIR, env: { ...env, ...publicEnv, NODE_ENV: 'production' }, encoding: 'utf8', stdio: 'pipe' });
  writeFileSync(join(ARTIFACTS, 'e2e-example-storefront-build.log'), buildOutput);
  example = spawn(process.execPath, [nextBin, 'start', '--port', String(port), '--hostname', LOOPBACK], {
    cwd: APP_DIR,
    env: {
      ...env,
      ...publicEnv,
      NODE_ENV: 'production',
      WOOCOMMERCE_URL: world.woocommerceUrl,
      WOOCOMMERCE_CONSUMER_KEY: DEMO_SECRETS.consumerKey,
      WOOCOMMERCE_CONSUMER_SECRET: DEMO_SECRETS.consumerSecret,
      CHECKOUT_TOKEN_SECRET: DEMO_SECRETS.checkoutTokenSecret,
      // The example's stand-in for a login: every order is this registered demo customer's.
      SHOP_CUSTOMER_ID: String(DEMO_CUSTOMER_ID),
    },
    stdio: 'ignore',
    detached: true,
  });
  exampleExited = new Promise((resolve) => example!.once('exit', resolve));
  // Up once it answers its shop page (which reads the products from the WooCommerce stand-in).
  // A readiness poll with a deadline, as the service's own (tests/support/e2e.ts): not an ordering of actors.
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await fetch(`${origin}/`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (example.exitCode !== null || Date.now() > deadline) throw new Error('the example storefront did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (haveBrowser) browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (example) await stopGroup(example, exampleExited);
  await world?.close();
  rmSync(BUILD_DIR, { recursive: true, force: true });
});

describe('the example storefront', () => {
  it('builds with next build, with its shop, payment and return pages', () => {
    for (const route of ['/', '/checkout/[orderId]', '/checkout/[orderId]/complete']) expect(buildOutput).toContain(route);
  });

  it.skipIf(!haveBrowser && !inCi)('takes a cart to a pending order, pays it with the token its server minted, and its return page shows it paid', async () => {
    const { page, orderId } = await toPaymentElement();
    // Stripe.js (played by the stand-in) confirms the card the customer chose and leaves for return_url.
    await page.getByLabel('Test card (Stripe.js stand-in)').selectOption('pm_card_visa');
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await page.waitForURL(new RegExp(`/checkout/${orderId}/complete\\?.*redirect_status=succeeded`));
    // Paid once Stripe's webhook has reached the service, whatever the page showed before it.
    await world.standIns.stripe.webhooksIdle();
    expect(world.standIns.woocommerce.model.get(orderId).status).toBe('processing');
    await page.reload();
    expect(await page.getByRole('status').textContent()).toBe('Paid. Thank you for your order!');

    // Another browser holds no token for the order: it neither pays nor reads it.
    const stranger = await browser!.newPage();
    await stranger.goto(`${origin}/checkout/${orderId}/complete?redirect_status=succeeded`);
    expect(await stranger.textContent('main')).toContain('This order is not open in this browser');
    await stranger.close();
    await page.close();
  });

  it.skipIf(!haveBrowser && !inCi)('pays a cart through the wallet: the shop’s rates at the wallet’s address, a rate chosen, exactly the order’s total', async () => {
    const page = await browser!.newPage();
    await page.route('https://js.stripe.com/**', (route) => route.fulfill({ contentType: 'text/javascript', body: stripeJsStandIn(world.standIns.stripe.url) }));
    const calls: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().startsWith(world.service.url)) calls.push(new URL(request.url()).pathname);
    });
    await page.goto(`${origin}/`);
    await page.getByLabel(/Organic cotton T-shirt/).fill('3');
    await page.getByRole('button', { name: 'Check out' }).click();
    await page.waitForURL(/\/checkout\/\d+$/);
    const orderId = Number(/\/checkout\/(\d+)$/.exec(page.url())![1]);
    const order = () => world.standIns.woocommerce.model.get(orderId);
    expect(order()).toMatchObject({ status: 'pending', total: '65.00' });

    // The wallet opens on its Toronto address: the shop's Canadian rates (taxed flat rate, free from 50.00), the first written to the order.
    const sheet = page.getByRole('dialog', { name: 'Wallet (Stripe.js stand-in)' });
    const total = sheet.getByLabel('Wallet total');
    await page.getByRole('button', { name: 'Pay with wallet (Stripe.js stand-in)' }).click();
    await expect.poll(() => total.textContent()).toBe('Total $79.10');
    expect(await sheet.getByRole('radio').evaluateAll((radios) => radios.map((radio) => radio.parentElement!.textContent!.trim()))).toEqual([
      'Flat rate $11.30',
      'Free shipping $0.00',
    ]);
    expect(order()).toMatchObject({ total: '79.10', shipping_lines: [{ method_id: 'flat_rate' }], shipping: { city: 'Toronto', postcode: 'M5V' } });

    // An address no method serves is refused in the wallet; back in Canada, the free rate is chosen.
    await sheet.getByLabel('Wallet shipping address').selectOption({ label: 'Sydney, Australia' });
    await expect.poll(() => sheet.getByRole('alert').textContent()).toBe('The shop does not ship to this address.');
    expect(await sheet.getByRole('button', { name: 'Pay in wallet' }).isDisabled()).toBe(true);
    await sheet.getByLabel('Wallet shipping address').selectOption({ label: 'Toronto, Canada' });
    await expect.poll(() => total.textContent()).toBe('Total $79.10');
    await sheet.getByRole('radio', { name: /Free shipping/ }).check();
    await expect.poll(() => total.textContent()).toBe('Total $67.80');
    expect(order()).toMatchObject({ total: '67.80', shipping_lines: [{ method_id: 'free_shipping', total: '0.00' }] });

    await sheet.getByRole('button', { name: 'Pay in wallet' }).click();
    await page.waitForURL(new RegExp(`/checkout/${orderId}/complete\\?.*redirect_status=succeeded`));
    await world.standIns.stripe.webhooksIdle();
    // Paid with exactly the order's total, free shipping included; the wallet's full details written by the final payment intent.
    const paid = order();
    expect(paid).toMatchObject({ status: 'processing', total: '67.80', shipping: { address_1: '12 Analytical Row', postcode: 'M5V 2T6' }, billing: { email: 'ada@example.com' } });
    const intentId = paid.meta_data.find((meta) => meta.key === '_payment_intent_id')!.value as string;
    expect(world.standIns.stripe.model.retrieve(intentId)).toMatchObject({ amount: 6780, status: 'succeeded' });
    expect(calls).toEqual([
      '/api/express-checkout/shipping-rates',
      '/api/express-checkout/shipping-rate',
      '/api/express-checkout/shipping-rates',
      '/api/express-checkout/shipping-rates',
      '/api/express-checkout/shipping-rate',
      '/api/express-checkout/shipping-rate',
      '/api/payment-intent',
    ]);
    await page.reload();
    expect(await page.getByRole('status').textContent()).toBe('Paid. Thank you for your order!');
    await page.close();
  });

  it.skipIf(!haveBrowser && !inCi)('a declined card shows Stripe’s message on the payment page and leaves the order pending', async () => {
    const { page, orderId } = await toPaymentElement();
    await page.getByLabel('Test card (Stripe.js stand-in)').selectOption('pm_card_chargeDeclined');
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await expect.poll(() => page.locator('main form [role="alert"]').textContent()).toBe('Your card was declined.');
    await world.standIns.stripe.webhooksIdle();
    expect(world.standIns.woocommerce.model.get(orderId).status).toBe('pending');
    await page.close();
  });

  it.skipIf(!haveBrowser && !inCi)('a signed-in customer saves the card when asked, and the next order’s Payment Element lists it and pays with it', async () => {
    const first = await toPaymentElement({ saveCard: true });
    await first.page.getByLabel('Test card (Stripe.js stand-in)').selectOption('pm_card_visa');
    await first.page.getByRole('button', { name: 'Pay', exact: true }).click();
    await first.page.waitForURL(new RegExp(`/checkout/${first.orderId}/complete\\?.*redirect_status=succeeded`));
    await world.standIns.stripe.webhooksIdle();
    const stripeCustomer = userMeta(world.standIns.woocommerce.model, DEMO_CUSTOMER_ID, '_stripe_customer_id') as string;
    const [saved] = world.standIns.stripe.model.customers.list(stripeCustomer);
    expect(saved).toMatchObject({ card: { brand: 'visa', last4: '4242' } });
    await first.page.close();

    // The next order's answer carries the customer session: the saved card is listed first and chosen.
    const second = await toPaymentElement();
    const cards = second.page.getByLabel('Test card (Stripe.js stand-in)');
    await expect.poll(() => cards.inputValue()).toBe(saved!.id);
    expect(await cards.locator('option:checked').textContent()).toBe('Saved visa •••• 4242');
    await second.page.getByRole('button', { name: 'Pay', exact: true }).click();
    await second.page.waitForURL(new RegExp(`/checkout/${second.orderId}/complete\\?.*redirect_status=succeeded`));
    await world.standIns.stripe.webhooksIdle();
    const paid = world.standIns.woocommerce.model.get(second.orderId);
    expect(paid.status).toBe('processing');
    const intentId = paid.meta_data.find((meta) => meta.key === '_payment_intent_id')!.value as string;
    expect(world.standIns.stripe.model.retrieve(intentId)).toMatchObject({ status: 'succeeded', customer: stripeCustomer, payment_method: saved!.id });
    await second.page.close();
  });
});
