/**
 * npm run dev — `next dev`, in demo mode when nothing is configured.
 *
 * Demo mode: when neither the store (WOOCOMMERCE_*) nor the card provider
 * (STRIPE_*) is configured in the environment, .env.local or .env, and
 * NODE_ENV is not production, this starts the local WooCommerce and Stripe
 * stand-ins and a demo storefront on loopback, seeds demo orders, runs
 * `next dev` against them with demo secrets, writes .demo/state.json for the
 * helper scripts, and prints how to use it. With any configuration present it
 * only runs `next dev`, so a half-configured service says what is missing
 * instead of quietly running against stand-ins.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { freePort, LOOPBACK } from './stand-ins/http';
import {
  DEMO_ORDERS,
  DEMO_PORTS,
  DEMO_SECRETS,
  demoServiceEnv,
  demoWebhookEndpoint,
  removeDemoState,
  startDemoStandIns,
  writeDemoState,
} from './stand-ins/demo';
import { startStorefront } from './stand-ins/storefront';

const CONFIG_VARS = [
  'WOOCOMMERCE_URL',
  'WOOCOMMERCE_CONSUMER_KEY',
  'WOOCOMMERCE_CONSUMER_SECRET',
  'STRIPE_SECRET_KEY',
  'STRIPE_WEBHOOK_SECRET',
];

const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');

/** Variables set in the environment or in the .env files Next.js reads in development. */
function configuredNames(): Set<string> {
  const names = new Set(Object.keys(process.env).filter((name) => (process.env[name] ?? '').trim() !== ''));
  for (const file of ['.env.development.local', '.env.local', '.env.development', '.env']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^\s*(?:export\s+)?([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (match?.[1] && (match[2] ?? '').replace(/^(['"])(.*)\1$/, '$2') !== '') names.add(match[1]);
    }
  }
  return names;
}

/** A port that is free now: the preferred one, else any. */
async function pickPort(preferred: number): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(freePort()));
    probe.listen(preferred, LOOPBACK, () => probe.close(() => resolve(preferred)));
  });
}

function runNextDev(args: string[], env: NodeJS.ProcessEnv, onReady?: () => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [nextBin, 'dev', ...args], {
      env,
      stdio: ['inherit', onReady ? 'pipe' : 'inherit', 'inherit'],
    });
    if (onReady && child.stdout) {
      let ready = false;
      child.stdout.on('data', (chunk: Buffer) => {
        process.stdout.write(chunk);
        if (!ready && /Ready in|✓ Ready/.test(chunk.toString())) {
          ready = true;
          onReady();
        }
      });
    }
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 130 : 1)));
  });
}

async function main(): Promise<void> {
  const passThrough = process.argv.slice(2);
  const configured = configuredNames();
  const present = CONFIG_VARS.filter((name) => configured.has(name));

  if (process.env.NODE_ENV === 'production' || present.length > 0) {
    process.exit(await runNextDev(passThrough, process.env));
  }

  const servicePort = Number(process.env.PORT) || (await pickPort(DEMO_PORTS.service));
  const serviceUrl = `http://localhost:${servicePort}`;
  const standIns = await startDemoStandIns({ woocommerce: DEMO_PORTS.woocommerce, stripe: DEMO_PORTS.stripe }, { serviceUrl: `http://${LOOPBACK}:${servicePort}` });
  // As Stripe does, the stand-in posts each payment's signed event to the service by itself.
  standIns.stripe.deliverEventsTo(demoWebhookEndpoint(`http://${LOOPBACK}:${servicePort}`));
  const storefront = await startStorefront({
    serviceUrl,
    tokenSecret: DEMO_SECRETS.checkoutTokenSecret,
    stripe: { url: standIns.stripe.url, publishableKey: DEMO_SECRETS.stripePublishableKey },
    woocommerceUrl: standIns.woocommerce.url,
    shippingWebhookSecret: DEMO_SECRETS.shippingWebhookSecret,
    // The page's Refund and Dispute buttons sign Stripe's events on the storefront's server, as demo:refund does.
    stripeWebhookSecret: DEMO_SECRETS.stripeWebhookSecret,
    preferredPort: DEMO_PORTS.storefront,
  });
  const storefrontUrl = `http://localhost:${storefront.port}`;
  const env: NodeJS.ProcessEnv = {
    // The demo promises no network: Next.js's telemetry would try to reach out.
    NEXT_TELEMETRY_DISABLED: '1',
    ...process.env,
    ...demoServiceEnv({
      woocommerce: standIns.woocommerce.url,
      stripe: standIns.stripe.url,
      storefrontOrigins: [storefrontUrl, `http://${LOOPBACK}:${storefront.port}`],
    }),
    // Every lifecycle event on, so `npm run demo:refund`, `demo:dispute` and the page's Radar review change the order (README, Demo helpers).
    CARD_LIFECYCLE_EVENTS: process.env.CARD_LIFECYCLE_EVENTS ?? 'refunds,disputes,async,reviews',
  };
  writeDemoState({
    pid: process.pid,
    startedAt: new Date().toISOString(),
    serviceUrl,
    storefrontUrl,
    storefrontOrigin: storefrontUrl,
    woocommerceUrl: standIns.woocommerce.url,
    stripeUrl: standIns.stripe.url,
    checkoutTokenSecret: DEMO_SECRETS.checkoutTokenSecret,
    stripeWebhookSecret: DEMO_SECRETS.stripeWebhookSecret,
    shippingWebhookSecret: DEMO_SECRETS.shippingWebhookSecret,
  });

  const cleanUp = async () => {
    removeDemoState();
    await Promise.all([standIns.close(), storefront.close()]);
  };
  process.on('exit', () => removeDemoState());

  console.log(
    `\nDemo mode: no WooCommerce or Stripe configured, so local stand-ins play both (nothing leaves this machine).\n` +
      `  WooCommerce stand-in  ${standIns.woocommerce.url}   Stripe stand-in  ${standIns.stripe.url}\n` +
      `Starting the service on ${serviceUrl} ...\n`,
  );

  const banner = () => {
    const orders = DEMO_ORDERS.map((o) => `    ${o.id}  ${o.what}`).join('\n');
    console.log(
      [
        '',
        '──────────────── Checkout service demo is running ────────────────',
        `  Storefront (allowed origin):  ${storefrontUrl}/?order=1001`,
        '    Pay by card with the test card that succeeds (or the declined one), watch the order turn',
        '    processing, then press "Ship it": the timeline shows what the service wrote.',
        `  Checkout service:             ${serviceUrl}`,
        `  Order state (read-only):      ${standIns.woocommerce.url}/demo/orders/1001`,
        '',
        '  Demo orders:',
        orders,
        '',
        '  Or from a terminal:',
        `    npm run token -- 1001                       # a checkout token for order 1001`,
        `    curl -s -X POST ${serviceUrl}/api/payment-intent \\`,
        `      -H 'Origin: ${storefrontUrl}' -H 'Content-Type: application/json' \\`,
        `      -d "{\\"token\\":\\"$(npm run -s token -- 1001)\\"}"`,
        `    npm run demo:pay -- 1001                    # the card payment succeeds (or: 1001 failed)`,
        `    npm run demo:ship -- 1001                   # the shipment notification arrives`,
        `    curl -s ${standIns.woocommerce.url}/demo/orders/1001   # processing → shipped`,
        '',
        '  Stop with Ctrl+C. Demo data lives in memory and starts fresh every time.',
        '───────────────────────────────────────────────────────────────────',
        '',
      ].join('\n'),
    );
  };

  const code = await runNextDev(['--port', String(servicePort), '--hostname', LOOPBACK, ...passThrough], env, banner);
  await cleanUp();
  process.exit(code);
}

main().catch((error: unknown) => {
  removeDemoState();
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
