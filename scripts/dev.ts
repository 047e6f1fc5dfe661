/**
 * npm run dev — `next dev`, in demo mode when no upstream is configured.
 *
 * First the configuration, read as `next dev` will read it (the environment,
 * then .env.development.local, .env.local, .env.development, .env): a
 * malformed variable stops here, before anything says ready. Then the mode,
 * said with its reason:
 * - demo, when neither the store (WOOCOMMERCE_*) nor the card provider
 *   (STRIPE_*) holds a value of its own (empty, or still .env.example's
 *   placeholder) and NODE_ENV is not production: it starts the local
 *   WooCommerce and Stripe stand-ins and a demo storefront on loopback, seeds
 *   demo orders, runs `next dev` against them with demo secrets, writes
 *   .demo/state.json for the helper scripts, and prints how to use it;
 * - configured otherwise: plain `next dev`, once the store, card and token
 *   settings are complete and none is a placeholder (else it refuses, naming
 *   them), so a half-filled .env.local never runs into 500s.
 * Either way every route is compiled (scripts/warm-up.ts) before it says the
 * service is ready, and with a cron secret (the demo has its own) one deep
 * health check loads the store and card clients, so the first payment waits
 * for neither the compiler nor the Stripe SDK.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseConfig, placeholderMessage, type Config } from '../lib/config';
import { ConfigError } from '../lib/errors';
import { mintCheckoutToken } from '../lib/security/checkout-token';
import { namesWithSources, nextEnvironment, whereSet, type LoadedEnvironment } from './configuration';
import { startMode, UPSTREAM_VARIABLES } from './start-mode';
import { freePort, LOOPBACK } from '../stand-ins/loopback-http';
import {
  DEMO_ORDERS,
  DEMO_PORTS,
  DEMO_SECRETS,
  demoServiceEnv,
  demoWebhookEndpoint,
  removeDemoState,
  startDemoStandIns,
  writeDemoState,
} from '../stand-ins/demo/world';
import { startStorefront } from '../stand-ins/demo/storefront';
import { StripeModel } from '../stand-ins/stripe/model';
import { cardEvent, signCardEvent } from '../stand-ins/webhook-deliveries';
import { appRoutes, rehearsePayment, WARM_UP_QUERY, WARM_UP_REQUEST_ID, warmClients, warmRoutes, type PaymentRehearsal } from './warm-up';

const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');

/** Every lifecycle event on, so `npm run demo:refund`, `demo:dispute` and the page's Radar review change the order (README, Demo helpers). */
const DEMO_LIFECYCLE_EVENTS = 'refunds,disputes,async,reviews';

/** A port that is free now: the preferred one, else any. */
async function pickPort(preferred: number): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(freePort()));
    probe.listen(preferred, LOOPBACK, () => probe.close(() => resolve(preferred)));
  });
}

/** Stops before anything starts: the reason, then exit 1. */
function refuse(message: string): never {
  console.error(`\nNot starting: ${message}\n`);
  process.exit(1);
}

/** The configuration the service will run with, or a refusal naming each bad variable and where it is set. */
function checkedConfig(source: Record<string, string | undefined>, loaded: LoadedEnvironment): Config {
  try {
    return parseConfig(source);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const where = whereSet(error.message, loaded);
    refuse(`${error.message}.${where ? `\n  Set in: ${where}.` : ''}\n  See .env.example and README "Configuration".`);
  }
}

// The warm-up's own request lines (marked by WARM_UP_QUERY), the service's log lines about them (their
// request id), and while it runs the compile notices: its progress lines say it instead.
const WARM_UP_REQUEST = new RegExp(`^\\s*(?:GET|OPTIONS|POST) \\S*\\?${WARM_UP_QUERY} |"requestId":"${WARM_UP_REQUEST_ID}"`);
const COMPILING = /^\s*○ Compiling /;

/**
 * Runs `next dev`; once it is listening, warms every route (its request lines hidden, a progress
 * line shown instead), then calls `onReady`. Resolves with its exit code.
 */
function runNextDev(
  args: string[],
  env: NodeJS.ProcessEnv,
  warmUp: { origin: string | undefined; cronSecret: string | undefined; rehearsal?: () => Promise<PaymentRehearsal> },
  onReady: () => void,
): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [nextBin, 'dev', ...args], { env, stdio: ['inherit', 'pipe', 'pipe'] });
    let phase: 'starting' | 'warming' | 'ready' = 'starting';
    let baseUrl = 'http://127.0.0.1:3000';
    /** Passes the stream's lines on, but the warm-up's own; on stdout, watches for where and when the server is up. */
    const relay = (from: NodeJS.ReadableStream, to: NodeJS.WriteStream, watch: boolean) => {
      let pending = '';
      from.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          if (WARM_UP_REQUEST.test(line) || (phase === 'warming' && COMPILING.test(line))) continue;
          to.write(`${line}\n`);
          if (!watch) continue;
          // "- Local: http://localhost:3000", printed before "Ready": where this server answers.
          const local = /- Local:\s+(https?:\/\/\S+)/.exec(line)?.[1];
          if (local) baseUrl = local.replace('//localhost:', `//${LOOPBACK}:`).replace(/\/+$/, '');
          if (phase !== 'starting' || !/Ready in|✓ Ready/.test(line)) continue;
          phase = 'warming';
          void warm(baseUrl, warmUp).then(() => {
            phase = 'ready';
            onReady();
          });
        }
      });
      from.on('end', () => {
        if (pending) to.write(`${pending}\n`);
      });
    };
    relay(child.stdout, process.stdout, true);
    relay(child.stderr, process.stderr, false);
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 130 : 1)));
  });
}

async function warm(
  baseUrl: string,
  { origin, cronSecret, rehearsal }: { origin: string | undefined; cronSecret: string | undefined; rehearsal?: () => Promise<PaymentRehearsal> },
): Promise<void> {
  const routes = appRoutes(join(process.cwd(), 'app'));
  const started = Date.now();
  console.log(`Compiling the service's ${routes.length} routes, so the first payment answers at once ...`);
  const results = await warmRoutes(baseUrl, routes, {
    ...(origin ? { origin } : {}),
    onDone: (result, done) => {
      if (result.ms >= 1000) console.log(`  ${result.route.path} ready in ${(result.ms / 1000).toFixed(1)} s (${done}/${routes.length})`);
    },
  });
  const broken = results.filter((r) => r.status === 0 || r.status >= 500);
  for (const { route, status } of broken) {
    console.log(`  ${route.path} did not load (${status === 0 ? 'no answer' : `HTTP ${status}`}): see the messages above; it is compiled again when asked for.`);
  }
  if (cronSecret) {
    const health = await warmClients(baseUrl, cronSecret);
    if (health !== 200) console.log(`  The deep health check answered ${health === 0 ? 'nothing' : `HTTP ${health}`}: the store or Stripe may not answer (GET /api/health with the cron secret says which).`);
  }
  if (rehearsal) await rehearsePayment(baseUrl, await rehearsal());
  console.log(`Routes ready in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

async function runConfigured(loaded: LoadedEnvironment, passThrough: string[], why: string): Promise<never> {
  const config = checkedConfig(loaded.env, loaded);
  if (config.placeholders.length > 0 || config.missing.length > 0) {
    refuse(
      `${why}, so the demo is off, but the configuration is not complete:\n` +
        (config.placeholders.length > 0 ? `  ${placeholderMessage(namesWithSources(config.placeholders, loaded))}\n` : '') +
        (config.missing.length > 0 ? `  not set: ${config.missing.join(', ')}\n` : '') +
        'Fill them in (see .env.example), or empty every WOOCOMMERCE_* and STRIPE_* variable to run the demo instead.',
    );
  }
  console.log(`\nConfigured mode: ${why}, so the service runs against your WooCommerce and Stripe (no stand-ins).\n`);
  const code = await runNextDev(passThrough, process.env, { origin: config.allowedOrigins[0], cronSecret: config.cronSecret }, () => {
    console.log('\nThe checkout service is ready: every route is compiled.\n');
  });
  process.exit(code);
}

async function main(): Promise<void> {
  const passThrough = process.argv.slice(2);
  const loaded = nextEnvironment(process.cwd(), true);
  const mode = startMode(loaded.env);
  const upstreamList = `${UPSTREAM_VARIABLES.slice(0, -1).join(', ')} and ${UPSTREAM_VARIABLES.at(-1)}`;

  if (mode.why === 'production') {
    await runConfigured(loaded, passThrough, 'NODE_ENV is production, where the demo never runs');
  }
  if (!mode.demo) {
    await runConfigured(loaded, passThrough, `${namesWithSources(mode.configured, loaded)} ${mode.configured.length === 1 ? 'is' : 'are'} set`);
  }

  const servicePort = Number(process.env.PORT) || (await pickPort(DEMO_PORTS.service));
  const serviceUrl = `http://localhost:${servicePort}`;
  const lifecycleEvents = loaded.env.CARD_LIFECYCLE_EVENTS ?? DEMO_LIFECYCLE_EVENTS;
  const cronSecret = loaded.env.CRON_SECRET?.trim() || DEMO_SECRETS.cronSecret;
  // The user's other variables (.env.local's UPSTREAM_TIMEOUT_MS, …) apply to the demo too: checked
  // with the demo's own values in place, before any stand-in starts.
  checkedConfig(
    {
      ...loaded.env,
      ...demoServiceEnv({
        woocommerce: `http://${LOOPBACK}:${DEMO_PORTS.woocommerce}`,
        stripe: `http://${LOOPBACK}:${DEMO_PORTS.stripe}`,
        storefrontOrigins: [`http://localhost:${DEMO_PORTS.storefront}`],
      }),
      CARD_LIFECYCLE_EVENTS: lifecycleEvents,
      CRON_SECRET: cronSecret,
    },
    loaded,
  );

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
    demoOrders: DEMO_ORDERS,
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
      shipstationV2: standIns.shipstationV2.url,
      storefrontOrigins: [storefrontUrl, `http://${LOOPBACK}:${storefront.port}`],
    }),
    CARD_LIFECYCLE_EVENTS: lifecycleEvents,
    CRON_SECRET: cronSecret,
  };
  writeDemoState({
    pid: process.pid,
    startedAt: new Date().toISOString(),
    serviceUrl,
    storefrontUrl,
    storefrontOrigin: storefrontUrl,
    woocommerceUrl: standIns.woocommerce.url,
    stripeUrl: standIns.stripe.url,
    shipstationV2Url: standIns.shipstationV2.url,
    checkoutTokenSecret: DEMO_SECRETS.checkoutTokenSecret,
    stripeWebhookSecret: DEMO_SECRETS.stripeWebhookSecret,
    shippingWebhookSecret: DEMO_SECRETS.shippingWebhookSecret,
  });

  const cleanUp = async () => {
    removeDemoState();
    await Promise.all([standIns.close(), storefront.close()]);
  };
  process.on('exit', () => removeDemoState());

  const placeholderNote =
    mode.placeholders.length > 0
      ? `  A copy of .env.example not filled in yet: ${placeholderMessage(namesWithSources(mode.placeholders, loaded))}.\n` +
        `  The demo uses its own values instead; fill in ${upstreamList} to run against your shop.\n`
      : '';
  console.log(
    `\nDemo mode: no WooCommerce or Stripe is configured (${upstreamList} hold no value of their own), so local stand-ins play both (nothing leaves this machine).\n` +
      placeholderNote +
      `  WooCommerce stand-in  ${standIns.woocommerce.url}   Stripe stand-in  ${standIns.stripe.url}   Storefront  ${storefrontUrl}/\n` +
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
        `    Every demo order:           ${storefrontUrl}/`,
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
        `    npm run demo:ship -- 1001 --v2 --delivered  # the same through ShipStation V2 (signed), then delivered`,
        `    curl -s ${standIns.woocommerce.url}/demo/orders/1001   # processing → shipped`,
        '',
        '  Stop with Ctrl+C. Demo data lives in memory and starts fresh every time.',
        '───────────────────────────────────────────────────────────────────',
        '',
      ].join('\n'),
    );
  };

  // A payment's two calls about an order the demo shop does not hold (scripts/warm-up.ts): they change nothing.
  const rehearsal = async (): Promise<PaymentRehearsal> => {
    const orderId = 999_999_999;
    const intent = new StripeModel().seedSucceeded({ amount: '100', currency: 'usd', metadata: { shop_order_id: String(orderId) } }, Math.floor(Date.now() / 1000));
    return {
      token: await mintCheckoutToken(orderId, { secret: DEMO_SECRETS.checkoutTokenSecret, ttl: '5m' }),
      origin: storefrontUrl,
      event: signCardEvent(cardEvent('payment_intent.succeeded', intent), DEMO_SECRETS.stripeWebhookSecret),
    };
  };
  const code = await runNextDev(['--port', String(servicePort), '--hostname', LOOPBACK, ...passThrough], env, { origin: storefrontUrl, cronSecret, rehearsal }, banner);
  await cleanUp();
  process.exit(code);
}

main().catch((error: unknown) => {
  removeDemoState();
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
