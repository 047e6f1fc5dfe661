/**
 * Demo mode's world: the stand-ins' credentials, the demo secrets the service
 * runs with, the seeded orders, and the state file that the helper scripts
 * (`npm run token`, `demo:pay`, `demo:ship`) read to find the running demo.
 *
 * Every value here is a public, local-only demo value. Not part of the production bundle.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { companionGateway } from '../woocommerce/companion-gateway';
import { StripeModel } from '../stripe/model';
import { startStripeStandIn, type StripeStandIn } from '../stripe/loopback-server';
import { WooCommerceModel } from '../woocommerce/model';
import { configureShipping } from '../woocommerce/shipping-zones';
import { startWooCommerceStandIn, type WooStandIn } from '../woocommerce/loopback-server';
import { V2_STAND_IN_API_KEY } from '../shipstation/v2';
import { startShipStationV2StandIn, type ShipStationV2StandIn } from '../shipstation/v2-loopback';

export const DEMO_SECRETS = {
  consumerKey: 'ck_demo_local_stand_in_key',
  consumerSecret: 'cs_demo_local_stand_in_secret',
  stripeSecretKey: 'sk_test_demo_local_stand_in',
  /** What the storefront page confirms card payments with, as Stripe.js would. */
  stripePublishableKey: 'pk_test_demo_local_stand_in',
  stripeWebhookSecret: 'whsec_demo_local_stand_in_signing_secret',
  checkoutTokenSecret: 'demo-checkout-token-secret-for-local-use-only',
  shippingWebhookSecret: 'demo-shipping-webhook-secret',
  /** Shared by the companion plugin's gateway (played by the WooCommerce stand-in) and the service's /api/store/* routes. */
  storeCallbackSecret: 'demo-store-callback-secret-for-local-use-only',
  /** Opens the cron routes and the deep health check, which `npm run dev` asks once so the first payment finds the clients loaded. */
  cronSecret: 'demo-cron-secret-for-local-use-only',
} as const;

/** Preferred ports; a busy one is replaced by a free one (the launcher prints what it used). */
export const DEMO_PORTS = { service: 3000, storefront: 3001, woocommerce: 3101, stripe: 3102, shipstationV2: 3103 } as const;

export const DEMO_CUSTOMER_ID = 42;
/** The registered customer whose first order saves a card and whose second pays with it. */
export const DEMO_SAVED_CARD_CUSTOMER_ID = 43;

export interface DemoOrder {
  id: number;
  /** The order as seeded, status and total included: the start banner and the README. */
  what: string;
  /** What the order is for whatever its status since: the demo page lists it beside the current status and total. */
  shows: string;
}

/** The seeded orders, as the README lists them. */
export const DEMO_ORDERS: DemoOrder[] = [
  { id: 1001, what: 'pending guest order, 45.00 USD', shows: 'guest order' },
  {
    id: 1002,
    what: `pending order of registered customer #${DEMO_CUSTOMER_ID}, 89.50 USD (their cart is cleared on payment)`,
    shows: `order of registered customer #${DEMO_CUSTOMER_ID} (their cart is cleared on payment)`,
  },
  { id: 1003, what: 'pending guest order in yen, 4000 JPY (zero-decimal currency)', shows: 'guest order in yen (zero-decimal currency)' },
  {
    id: 1004,
    what: 'already paid by card (processing): payment is refused; shipping, refunds and disputes work',
    shows: 'paid by card before the demo started: shipping, refunds and disputes work on it',
  },
  { id: 1005, what: 'pending guest order with a fee line, 27.50 EUR', shows: 'guest order with a fee line' },
  {
    id: 1006,
    what: 'pending guest order of e-books only (virtual, downloadable), 12.00 USD: paid by card it still gets its paid date',
    shows: 'guest order of e-books only (virtual, downloadable): paid by card it still gets its paid date',
  },
  {
    id: 1007,
    what: 'pending guest order, 45.00 USD, to pay with a wallet (Express checkout, played by the Stripe stand-in): the shop’s rates at the wallet’s address',
    shows: 'guest order to pay with a wallet (Express checkout): the shop’s rates at the wallet’s address',
  },
  {
    id: 1008,
    what: `pending order of registered customer #${DEMO_SAVED_CARD_CUSTOMER_ID}, 30.00 USD: tick “Save this card” and pay`,
    shows: `order of registered customer #${DEMO_SAVED_CARD_CUSTOMER_ID}: tick “Save this card” and pay`,
  },
  {
    id: 1009,
    what: `second pending order of registered customer #${DEMO_SAVED_CARD_CUSTOMER_ID}, 25.00 USD: the card saved on #1008 is listed and pays it`,
    shows: `second order of registered customer #${DEMO_SAVED_CARD_CUSTOMER_ID}: the card saved on #1008 pays it`,
  },
];

/**
 * The demo shop's shipping, for the wallet's rates: Canada a taxed flat rate or free from 50.00, Australia a zone
 * with no method (the wallet refuses the address), elsewhere a standard and an express rate.
 */
export const DEMO_SHIPPING = {
  zones: [
    {
      name: 'Canada',
      locations: [{ type: 'country' as const, code: 'CA' }],
      methods: [
        { type: 'flat_rate' as const, instanceId: 1, cost: '10.00' },
        { type: 'free_shipping' as const, instanceId: 3, minAmount: '50.00' },
      ],
    },
    { name: 'Australia', locations: [{ type: 'country' as const, code: 'AU' }], methods: [] },
  ],
  restOfWorld: [
    { type: 'flat_rate' as const, instanceId: 2, cost: '15.00' },
    { type: 'flat_rate' as const, instanceId: 4, title: 'Express', cost: '30.00' },
  ],
};

/** The shop and the card provider of the demo, seeded so that each demo order is in the state DEMO_ORDERS says. */
export interface DemoModels {
  woocommerce: WooCommerceModel;
  stripe: StripeModel;
}

/**
 * WooCommerce as a shop with a shipment-tracking plugin (`shipped` is a
 * registered status; stock WooCommerce has none) and a 13% Canadian tax rate,
 * taxed by the customer's shipping address (WooCommerce's default setting),
 * and shipping zones for express checkout's rates (DEMO_SHIPPING);
 * Stripe holding the card payment of the order that is already paid.
 */
export function createDemoModels(): DemoModels {
  const woocommerce = new WooCommerceModel({ customStatuses: ['shipped'], taxRates: { CA: 13 } });
  configureShipping(woocommerce, DEMO_SHIPPING);
  const stripe = new StripeModel();
  seedDemoOrders(woocommerce, stripe);
  return { woocommerce, stripe };
}

export function createDemoWooCommerce(): WooCommerceModel {
  return createDemoModels().woocommerce;
}

export function seedDemoOrders(woo: WooCommerceModel, stripe: StripeModel): void {
  const guest = { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', country: 'US' };
  woo.seedCustomer({ id: DEMO_CUSTOMER_ID, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });
  woo.seed({
    id: 1001,
    billing: guest,
    lines: [{ name: 'Organic cotton T-shirt', quantity: 2, total: '40.00' }],
    shipping_total: '5.00',
  });
  woo.seed({
    id: 1002,
    customer_id: DEMO_CUSTOMER_ID,
    billing: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', country: 'GB' },
    lines: [
      { name: 'Analytical engine poster', quantity: 1, total: '24.50' },
      { name: 'Brass gear set', quantity: 1, total: '60.00' },
    ],
    shipping_total: '5.00',
  });
  woo.carts.set(DEMO_CUSTOMER_ID, [
    { product_id: 500, quantity: 1 },
    { product_id: 501, quantity: 1 },
  ]);
  woo.seed({
    id: 1003,
    currency: 'JPY',
    billing: { ...guest, country: 'JP' },
    lines: [{ name: 'Matcha tea set', quantity: 1, total: '3500' }],
    shipping_total: '500',
  });
  // Paid by card as it was placed, before the demo started: Stripe holds the payment as the shop does,
  // so Refund and Dispute work on it.
  const paidAt = new Date();
  const paid = stripe.seedSucceeded(
    { amount: '3000', currency: 'usd', metadata: { shop_order_id: '1004' }, description: 'Order #1004' },
    Math.floor(paidAt.getTime() / 1000),
  );
  const chargeId = paid.latest_charge as string;
  woo.seed({
    id: 1004,
    status: 'processing',
    billing: guest,
    lines: [{ name: 'Wool socks', quantity: 3, total: '30.00' }],
    date_paid: paidAt.toISOString().slice(0, 19),
    // What the card webhook records on a paid order (lib/webhooks/card/payment-succeeded.ts).
    meta_data: [
      { key: '_payment_intent_id', value: paid.id },
      { key: '_provider_payment_intent_id', value: paid.id },
      { key: '_provider_charge_id', value: chargeId },
    ],
  });
  woo.update(1004, { payment_method: 'cardprovider', payment_method_title: 'Credit Card (cardprovider)', transaction_id: chargeId });
  woo.seed({
    id: 1005,
    currency: 'EUR',
    billing: { ...guest, country: 'DE' },
    lines: [{ name: 'Linen apron', quantity: 1, total: '22.50' }],
    fees: [{ name: 'Gift wrapping', total: '5.00' }],
  });
  woo.seed({
    id: 1006,
    billing: guest,
    lines: [
      { name: 'Notes on the Analytical Engine (e-book)', quantity: 1, total: '9.00', virtual: true, downloadable: true },
      { name: 'Sketch of the Engine (PDF)', quantity: 1, total: '3.00', virtual: true, downloadable: true },
    ],
  });
  woo.seed({
    id: 1007,
    billing: guest,
    lines: [
      { name: 'Organic cotton T-shirt', quantity: 1, total: '20.00' },
      { name: 'Wool socks', quantity: 2, total: '20.00' },
    ],
    shipping_total: '5.00',
  });
  const mary = { first_name: 'Mary', last_name: 'Somerville', email: 'mary@example.com', country: 'US' };
  woo.seedCustomer({ id: DEMO_SAVED_CARD_CUSTOMER_ID, email: mary.email, first_name: mary.first_name, last_name: mary.last_name });
  woo.seed({ id: 1008, customer_id: DEMO_SAVED_CARD_CUSTOMER_ID, billing: mary, lines: [{ name: 'Brass gear set', quantity: 1, total: '25.00' }], shipping_total: '5.00' });
  woo.seed({ id: 1009, customer_id: DEMO_SAVED_CARD_CUSTOMER_ID, billing: mary, lines: [{ name: 'Linen apron', quantity: 1, total: '20.00' }], shipping_total: '5.00' });
}

/**
 * The shop has the companion plugin, configured with the demo's store callback secret: a refund made in
 * its admin asks the service at `serviceUrl` for the money back (../woocommerce/companion-gateway.ts).
 */
export function installCompanionGateway(woocommerce: WooCommerceModel, serviceUrl: string): void {
  woocommerce.gateway = companionGateway({ secret: DEMO_SECRETS.storeCallbackSecret, send: (request) => fetch(request), serviceUrl });
}

export interface DemoStandIns {
  woocommerce: WooStandIn;
  stripe: StripeStandIn;
  /** ShipStation V2 (`npm run demo:ship -- <id> --v2`): its API, its JWKS, and deliveries it signs. */
  shipstationV2: ShipStationV2StandIn;
  close(): Promise<void>;
}

/** Starts both stand-ins on loopback with the demo data. Ports: preferred ones when free, or 0 for any. */
export async function startDemoStandIns(
  ports: { woocommerce?: number; stripe?: number } = {},
  options: { webhookRetryDelaysMs?: number[]; serviceUrl?: string } = {},
): Promise<DemoStandIns> {
  const models = createDemoModels();
  if (options.serviceUrl) installCompanionGateway(models.woocommerce, options.serviceUrl);
  const woocommerce = await startWooCommerceStandIn({
    model: models.woocommerce,
    credentials: { consumerKey: DEMO_SECRETS.consumerKey, consumerSecret: DEMO_SECRETS.consumerSecret },
    ...(ports.woocommerce ? { preferredPort: ports.woocommerce } : { port: 0 }),
  });
  const stripe = await startStripeStandIn({
    model: models.stripe,
    secretKey: DEMO_SECRETS.stripeSecretKey,
    publishableKey: DEMO_SECRETS.stripePublishableKey,
    ...(options.webhookRetryDelaysMs ? { webhookRetryDelaysMs: options.webhookRetryDelaysMs } : {}),
    ...(ports.stripe ? { preferredPort: ports.stripe } : { port: 0 }),
  });
  const shipstationV2 = await startShipStationV2StandIn(ports.woocommerce ? { preferredPort: DEMO_PORTS.shipstationV2 } : { port: 0 });
  return {
    woocommerce,
    stripe,
    shipstationV2,
    close: async () => {
      await Promise.all([woocommerce.close(), stripe.close(), shipstationV2.close()]);
    },
  };
}

/** The service's card webhook as the demo's Stripe endpoint, with the demo signing secret. */
export function demoWebhookEndpoint(serviceUrl: string): { url: string; secret: string } {
  return { url: `${serviceUrl.replace(/\/+$/, '')}/api/stripe/webhook`, secret: DEMO_SECRETS.stripeWebhookSecret };
}

/** The service's environment against the stand-ins, with the demo secrets. */
export function demoServiceEnv(urls: { woocommerce: string; stripe: string; storefrontOrigins: string[]; shipstationV2?: string }): Record<string, string> {
  return {
    ...(urls.shipstationV2
      ? {
          SHIPSTATION_V2_API_KEY: V2_STAND_IN_API_KEY,
          SHIPSTATION_V2_API_BASE_URL: urls.shipstationV2,
          SHIPSTATION_V2_JWKS_URL: `${urls.shipstationV2}/jwks`,
        }
      : {}),
    WOOCOMMERCE_URL: urls.woocommerce,
    WOOCOMMERCE_CONSUMER_KEY: DEMO_SECRETS.consumerKey,
    WOOCOMMERCE_CONSUMER_SECRET: DEMO_SECRETS.consumerSecret,
    STRIPE_SECRET_KEY: DEMO_SECRETS.stripeSecretKey,
    STRIPE_WEBHOOK_SECRET: DEMO_SECRETS.stripeWebhookSecret,
    STRIPE_API_BASE_URL: urls.stripe,
    CHECKOUT_TOKEN_SECRET: DEMO_SECRETS.checkoutTokenSecret,
    SHIPPING_WEBHOOK_SECRET: DEMO_SECRETS.shippingWebhookSecret,
    STORE_CALLBACK_SECRET: DEMO_SECRETS.storeCallbackSecret,
    ALLOWED_ORIGINS: urls.storefrontOrigins.join(','),
  };
}

export interface DemoState {
  pid: number;
  startedAt: string;
  serviceUrl: string;
  storefrontUrl: string;
  woocommerceUrl: string;
  stripeUrl: string;
  /** The ShipStation V2 stand-in (absent in a state file written before it existed). */
  shipstationV2Url?: string;
  storefrontOrigin: string;
  checkoutTokenSecret: string;
  stripeWebhookSecret: string;
  shippingWebhookSecret: string;
}

export const DEMO_STATE_FILE = join(process.cwd(), '.demo', 'state.json');

export function writeDemoState(state: DemoState, file = DEMO_STATE_FILE): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** The running demo's state, or undefined when no demo is running (no file, or its launcher is gone). */
export function readDemoState(file = DEMO_STATE_FILE): DemoState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as DemoState;
    process.kill(state.pid, 0);
    return state;
  } catch {
    return undefined;
  }
}

export function removeDemoState(file = DEMO_STATE_FILE): void {
  rmSync(file, { force: true });
}
