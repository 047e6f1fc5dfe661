/**
 * npm run stand-ins -- [--service-url http://localhost:3000] [--woocommerce-port 3101] [--stripe-port 3102]
 *
 * The WooCommerce and Stripe stand-ins on their own, with the demo's orders and products, for a
 * production-like run of the service (`npm run build && npm start`) or a storefront: prints their URLs
 * and keys as the environment to give the service. With --service-url, the Stripe stand-in posts each
 * confirmation's signed event to that service's webhook, and the shop's refunds reach its /api/store routes.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEMO_PORTS, DEMO_SECRETS, demoWebhookEndpoint, startDemoStandIns, type DemoStandIns } from '../stand-ins/demo/world';

export interface StandInsOptions {
  serviceUrl?: string | undefined;
  /** 0: any free port; unset: the demo's ports when free. */
  woocommercePort?: number | undefined;
  stripePort?: number | undefined;
}

export interface RunningStandIns {
  standIns: DemoStandIns;
  /** The service's environment against these stand-ins. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startStandIns(options: StandInsOptions = {}): Promise<RunningStandIns> {
  const standIns = await startDemoStandIns(
    { woocommerce: options.woocommercePort ?? DEMO_PORTS.woocommerce, stripe: options.stripePort ?? DEMO_PORTS.stripe },
    options.serviceUrl ? { serviceUrl: options.serviceUrl } : {},
  );
  if (options.serviceUrl) standIns.stripe.deliverEventsTo(demoWebhookEndpoint(options.serviceUrl));
  const env = {
    WOOCOMMERCE_URL: standIns.woocommerce.url,
    WOOCOMMERCE_CONSUMER_KEY: DEMO_SECRETS.consumerKey,
    WOOCOMMERCE_CONSUMER_SECRET: DEMO_SECRETS.consumerSecret,
    STRIPE_API_BASE_URL: standIns.stripe.url,
    STRIPE_SECRET_KEY: DEMO_SECRETS.stripeSecretKey,
    STRIPE_WEBHOOK_SECRET: DEMO_SECRETS.stripeWebhookSecret,
    STORE_CALLBACK_SECRET: DEMO_SECRETS.storeCallbackSecret,
  };
  return { standIns, env, close: () => standIns.close() };
}

/** What the command prints: where each stand-in answers, and the environment to paste. */
export function standInsBanner({ env }: RunningStandIns, serviceUrl: string | undefined): string {
  return [
    `WooCommerce stand-in  ${env.WOOCOMMERCE_URL}   (orders as the shop holds them: ${env.WOOCOMMERCE_URL}/demo/orders)`,
    `Stripe stand-in       ${env.STRIPE_API_BASE_URL}   (publishable key ${DEMO_SECRETS.stripePublishableKey})`,
    serviceUrl
      ? `Stripe's events go to ${demoWebhookEndpoint(serviceUrl).url}`
      : 'No --service-url: the Stripe stand-in keeps its events (post one with npm run send-event).',
    '',
    '# The service against these stand-ins (.env.local, or the environment of `npm start`):',
    ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
    '# And the service’s own: CHECKOUT_TOKEN_SECRET (32+ bytes, shared with the storefront’s server), ALLOWED_ORIGINS=<the storefront’s origin>, SHIPPING_WEBHOOK_SECRET',
    '',
    'Stop with Ctrl+C. The data lives in memory and starts fresh every time.',
  ].join('\n');
}

function port(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) throw new Error(`--${name} must be a port number (0: any free port)`);
  return Number(value);
}

async function main(): Promise<void> {
  let options: StandInsOptions;
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: { 'service-url': { type: 'string' }, 'woocommerce-port': { type: 'string' }, 'stripe-port': { type: 'string' } },
      strict: true,
    });
    const serviceUrl = values['service-url'];
    if (serviceUrl !== undefined && !/^https?:\/\/[^/]/.test(serviceUrl)) throw new Error('--service-url must be the service’s base URL, e.g. http://localhost:3000');
    options = { serviceUrl, woocommercePort: port(values['woocommerce-port'], 'woocommerce-port'), stripePort: port(values['stripe-port'], 'stripe-port') };
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\nUsage: npm run stand-ins -- [--service-url http://localhost:3000] [--woocommerce-port 3101] [--stripe-port 3102]`);
    process.exit(2);
  }
  const running = await startStandIns(options);
  console.log(standInsBanner(running, options.serviceUrl));
  const stop = () => void running.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
