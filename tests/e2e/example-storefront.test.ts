/**
 * examples/next-storefront as a storefront developer runs it: `next build` of a copy laid out as
 * `npm install` leaves it (the client linked from ../../client, the other packages the service's own),
 * then `next start` against the stand-ins and the service's production build. In Chromium, a cart
 * becomes a pending order on the example's server, the address reaches the service with the token
 * that server minted, and after Stripe's confirmation (played here: Stripe.js cannot load offline)
 * and its webhook, the return page shows the order paid.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '@/scripts/build-client';
import { environmentWithoutServiceVariables, stopGroup } from '@/scripts/service-process';
import { DEMO_SECRETS } from '@/stand-ins/demo/world';
import { freePort, LOOPBACK } from '@/stand-ins/loopback-http';
import { ARTIFACTS, CHROMIUM_ARGS, CHROMIUM_PATH, chromiumAvailable, startE2eWorld, type E2eWorld } from '../support/e2e';

const ROOT = process.cwd();
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const haveBrowser = chromiumAvailable();
if (!haveBrowser && !inCi) process.stderr.write(`[e2e] example storefront in the browser skipped: no Chromium at ${CHROMIUM_PATH}\n`);

// Inside the repository, so the copy and the hard links of node_modules share its file system.
const BUILD_DIR = join(ARTIFACTS, 'example-storefront-build');
const APP_DIR = join(BUILD_DIR, 'examples', 'next-storefront');
const nextBin = join(BUILD_DIR, 'node_modules', 'next', 'dist', 'bin', 'next');

let world: E2eWorld;
let origin: string;
let example: ChildProcess | undefined;
let exampleExited: Promise<unknown>;
let buildOutput = '';
let browser: Browser | undefined;

/** The example, the client package and node_modules as `npm install` in the example lays them out. */
async function layOut(): Promise<void> {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  mkdirSync(join(BUILD_DIR, 'client'), { recursive: true });
  cpSync(join(ROOT, 'examples', 'next-storefront'), APP_DIR, { recursive: true, filter: (source) => !/\/(node_modules|\.next)$/.test(source) });
  cpSync(join(ROOT, 'client', 'package.json'), join(BUILD_DIR, 'client', 'package.json'));
  await buildClient(join(BUILD_DIR, 'client', 'dist'));
  // Hard links: the service's packages (next, react, @stripe/*, the WooCommerce client) in a second
  // place within the build's root, without copying a byte; Turbopack reads nothing outside its root.
  execFileSync('cp', ['-al', realpathSync(join(ROOT, 'node_modules')), join(BUILD_DIR, 'node_modules')]);
  mkdirSync(join(BUILD_DIR, 'node_modules', '@checkout-service'), { recursive: true });
  symlinkSync('../../client', join(BUILD_DIR, 'node_modules', '@checkout-service', 'storefront-client'));
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
    },
    stdio: 'ignore',
    detached: true,
  });
  exampleExited = new Promise((resolve) => example!.once('exit', resolve));
  // Up once it answers its shop page (which reads the products from the WooCommerce stand-in).
  for (let attempt = 0; attempt < 300; attempt += 1) {
    const status = await fetch(`${origin}/`).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (example.exitCode !== null || attempt === 299) throw new Error('the example storefront did not start');
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
    const page = await browser!.newPage();
    // Stripe.js comes from Stripe's servers, which this machine does not reach.
    await page.route('https://*.stripe.com/**', (route) => route.abort());
    await page.route('https://*.stripe.network/**', (route) => route.abort());
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
    const answer = page.waitForResponse((response) => response.url() === `${world.service.url}/api/payment-intent` && response.request().method() === 'POST');
    await page.getByRole('button', { name: 'Continue to payment' }).click();
    const intent = (await (await answer).json()) as { client_secret: string; payment_intent_id: string };
    // The service wrote the address: WooCommerce taxed the order (13 % in Canada), and the intent is for the new total.
    expect(world.standIns.woocommerce.model.get(orderId)).toMatchObject({ total: '50.85', billing: { city: 'Toronto' } });
    expect(world.standIns.stripe.model.retrieve(intent.payment_intent_id)).toMatchObject({ amount: 5085, metadata: { shop_order_id: String(orderId) } });

    // What stripe.confirmPayment sends from the page, with the publishable key and the client secret.
    const confirmed = await fetch(`${world.standIns.stripe.url}/v1/payment_intents/${intent.payment_intent_id}/confirm`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ payment_method: 'pm_card_visa', key: DEMO_SECRETS.stripePublishableKey, client_secret: intent.client_secret }),
    });
    expect(confirmed.status).toBe(200);
    await world.standIns.stripe.webhooksIdle();
    expect(world.standIns.woocommerce.model.get(orderId).status).toBe('processing');

    await page.goto(`${origin}/checkout/${orderId}/complete?payment_intent=${intent.payment_intent_id}&redirect_status=succeeded`);
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Paid. Thank you for your order!');

    // Another browser holds no token for the order: it neither pays nor reads it.
    const stranger = await browser!.newPage();
    await stranger.goto(`${origin}/checkout/${orderId}/complete?redirect_status=succeeded`);
    expect(await stranger.textContent('main')).toContain('This order is not open in this browser');
    await stranger.close();
    await page.close();
  });
});
