/**
 * Service configuration (docs/decisions.md#d2): `process.env` parsed once with zod.
 *
 * A bad configuration is reported in one message that names every missing or
 * malformed variable and never prints a value. In production the service
 * refuses to start without the store, card-provider and token settings, or
 * with a value left as .env.example's placeholder; in development and tests
 * those parts may be missing, and whatever needs them fails with a clear
 * "not configured" error instead (`npm run dev` decides before that: the demo
 * when no upstream is configured, else a complete configuration, see startMode).
 */
import { z } from 'zod';
import { ConfigError, ServiceNotConfiguredError } from '@/lib/errors';

/** Who a store call is for: the storefront, the providers' webhooks, or the crons and the health check. */
export const STORE_CALLERS = ['checkout', 'webhook', 'background'] as const;
export type StoreCaller = (typeof STORE_CALLERS)[number];

/** The classes that may be guaranteed slots; background work takes what is left. */
export type ReservingCaller = Exclude<StoreCaller, 'background'>;

export interface SlotSplit {
  /** STORE_MAX_CONCURRENCY: concurrent store calls across every instance. */
  limit: number;
  /** Slots kept for each class's new requests while it uses fewer; at least one slot stays unreserved. */
  reserved: Record<ReservingCaller, number>;
}

/** Half the slots for checkout, a quarter for the webhooks, the rest first come first served (always at least one). */
export function defaultReserve(limit: number): Record<ReservingCaller, number> {
  return { checkout: Math.floor(limit / 2), webhook: Math.floor(limit / 4) };
}

/** An empty variable (`FOO=` in a .env file) counts as unset. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .transform((v) => v.replace(/\/+$/, ''));

const SITE_URL_EXPECTED = "must be an http:// or https:// URL without query or fragment: the store's Site Address (WordPress Settings → General)";

const prefixed = (prefixes: string[]) =>
  z.string().refine((v) => prefixes.some((p) => v.startsWith(p)), {
    message: `must start with ${prefixes.map((p) => `"${p}"`).join(' or ')}`,
  });

const positiveInt = z.coerce.number().int().positive();

const tokenSecret = z
  .string()
  .refine((v) => Buffer.byteLength(v, 'utf8') >= 32, { message: 'must be at least 32 bytes long' });

/** Several signing secrets while one is being rolled (docs/decisions.md#d2): a signature valid for any of them counts. */
const webhookSecrets = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .refine((list) => list.length > 0 && list.every((s) => s.startsWith('whsec_')), {
    message: 'must be one or more comma-separated secrets, each starting with "whsec_"',
  });

/**
 * SHIPPING_WEBHOOK_SECRET: one secret, or several comma-separated while the
 * one in ShipStation's webhook URL is being changed (docs/operations.md, Rotating secrets);
 * a delivery carrying any of them is accepted. A secret cannot hold a comma.
 */
const sharedSecrets = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .refine((list) => list.length > 0 && list.every((s) => s.length >= 16), {
    message: 'must be one or more comma-separated secrets, each at least 16 characters long',
  });

/** CARD_LIFECYCLE_EVENTS words (docs/integrations/stripe.md): what happens to an order after its payment. */
export const LIFECYCLE_EVENT_SETTINGS = ['refunds', 'disputes', 'async', 'reviews'] as const;
export type LifecycleEventSetting = (typeof LIFECYCLE_EVENT_SETTINGS)[number];

/** A comma-separated list of known words, each at most once; empty means none. */
const wordList = <W extends string>(words: readonly W[], message: string) =>
  z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
    .refine((list) => list.every((word) => (words as readonly string[]).includes(word)), { message })
    .transform((list) => [...new Set(list)] as W[]);

const LIFECYCLE_EXPECTED = `must be a comma-separated list of ${LIFECYCLE_EVENT_SETTINGS.join(', ')} (or empty)`;

/** STRIPE_PAYMENT_METHODS: `automatic`, or payment method types such as card,link (lower-case identifiers). */
const paymentMethodsSetting = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
  .refine(
    (list) =>
      list.length > 0 &&
      (list.length === 1 && list[0] === 'automatic' ? true : list.every((type) => type !== 'automatic' && /^[a-z][a-z0-9_]{0,49}$/.test(type))),
    { message: 'must be "automatic" or a comma-separated list of payment method types such as card or card,link' },
  )
  .transform((list) => (list[0] === 'automatic' ? ('automatic' as const) : [...new Set(list)]));

/** STRIPE_CAPTURE: when a card payment is captured (docs/integrations/woocommerce-plugin.md, "From the WooCommerce admin"). */
export const CAPTURE_SETTINGS = ['automatic', 'on_shipment', 'manual'] as const;
export type CaptureSetting = (typeof CAPTURE_SETTINGS)[number];
/** `customer_note`: the spec's field (the customer's own note is kept aside); `order_notes`: emailed customer order notes. */
export const CUSTOMER_MESSAGE_SETTINGS = ['customer_note', 'order_notes'] as const;
export type CustomerMessageSetting = (typeof CUSTOMER_MESSAGE_SETTINGS)[number];
/** AUTHORIZATION_EXPIRY_ACTION: what the expiry cron does with an old authorization (docs/integrations/woocommerce-plugin.md, "From the WooCommerce admin"). */
export const EXPIRY_ACTIONS = ['report', 'capture'] as const;
/** STORE_RESERVED_SLOTS: `checkout:<n>,webhook:<n>`; a class not named keeps its default share. */
const reservedSlotsSetting = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
  .refine((list) => list.every((entry) => /^(checkout|webhook):\d{1,4}$/.test(entry)), {
    message: 'must be checkout:<slots>,webhook:<slots> (either may be left out)',
  })
  .transform((list) => Object.fromEntries(list.map((entry) => entry.split(':')).map(([caller, n]) => [caller, Number(n)])) as Partial<Record<ReservingCaller, number>>);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),

  WOOCOMMERCE_URL: optional(baseUrl),
  // The store's Site Address, which WooCommerce signs OAuth over when WOOCOMMERCE_URL is another address (http:// only).
  WOOCOMMERCE_SITE_URL: optional(
    baseUrl.refine((v) => !/[?#@]/.test(v.replace(/^\w+:\/\//, '')), { message: SITE_URL_EXPECTED }),
  ),
  WOOCOMMERCE_CONSUMER_KEY: optional(prefixed(['ck_'])),
  WOOCOMMERCE_CONSUMER_SECRET: optional(prefixed(['cs_'])),

  STRIPE_SECRET_KEY: optional(prefixed(['sk_', 'rk_'])),
  STRIPE_WEBHOOK_SECRET: optional(webhookSecrets),
  STRIPE_API_BASE_URL: optional(baseUrl),

  CHECKOUT_TOKEN_SECRET: optional(tokenSecret),
  CHECKOUT_TOKEN_SECRET_PREVIOUS: optional(tokenSecret),
  CHECKOUT_TOKEN_ISSUER: optional(z.string()),
  CHECKOUT_TOKEN_AUDIENCE: optional(z.string()),

  ALLOWED_ORIGINS: optional(z.string()),
  TRUST_PROXY_HOPS: optional(z.coerce.number().int().min(1).max(10)).transform((v) => v ?? 1),
  CLIENT_IP_HEADER: optional(
    z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[a-z0-9-]{1,100}$/, 'must be a header name such as x-real-ip or cf-connecting-ip'),
  ).transform((v) => v ?? 'x-forwarded-for'),

  SHIPPING_WEBHOOK_SECRET: optional(sharedSecrets),
  SHIPPING_WEBHOOK_AUTH: optional(z.enum(['off'], { error: 'must be "off" or unset' })),
  SHIPSTATION_API_KEY: optional(z.string()),
  SHIPSTATION_API_SECRET: optional(z.string()),
  SHIPSTATION_API_BASE_URL: optional(baseUrl).transform((v) => v ?? 'https://ssapi.shipstation.com'),
  // ShipStation V2 (api.shipstation.com): its own key, base URL, signing keys, and what a delivery does.
  SHIPSTATION_V2_API_KEY: optional(z.string()),
  SHIPSTATION_V2_API_BASE_URL: optional(baseUrl).transform((v) => v ?? 'https://api.shipstation.com'),
  SHIPSTATION_V2_JWKS_URL: optional(baseUrl).transform((v) => v ?? 'https://api.shipengine.com/jwks'),
  SHIPPING_DELIVERED_COMPLETES: optional(z.enum(['on', 'off'])).transform((v) => v !== 'off'),

  REDIS_URL: optional(z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })),
  // Short: every request waits at most this long on Redis before falling back or failing (docs/operations.md, Shared state).
  REDIS_TIMEOUT_MS: optional(positiveInt.max(10_000)).transform((v) => v ?? 500),
  // Lets one Redis serve several shops or environments (staging beside production).
  REDIS_KEY_PREFIX: optional(
    z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'must be 1 to 64 letters, digits or : _ . -'),
  ).transform((v) => v ?? 'checkout:'),
  UPSTREAM_TIMEOUT_MS: optional(positiveInt.max(120_000)).transform((v) => v ?? 10_000),
  STORE_MAX_CONCURRENCY: optional(positiveInt.max(1000)),
  STORE_RESERVED_SLOTS: optional(reservedSlotsSetting),

  CRON_SECRET: optional(z.string().min(16, 'must be at least 16 characters long')),
  // This deployment's public URL, where the providers' webhooks should point (docs/integrations/stripe.md); on Vercel, its production domain serves.
  SERVICE_URL: optional(baseUrl),
  VERCEL_ENV: optional(z.string()),
  VERCEL_PROJECT_PRODUCTION_URL: optional(z.string()),
  // Stripe keeps events for 30 days.
  RECONCILE_WINDOW_HOURS: optional(positiveInt.max(720)).transform((v) => v ?? 72),
  // Every pass rereads the window's shipments from ShipStation: a longer one costs more of its 40 requests a minute.
  SHIPMENT_RECONCILE_WINDOW_HOURS: optional(positiveInt.max(720)).transform((v) => v ?? 72),

  CARD_LIFECYCLE_EVENTS: optional(wordList(LIFECYCLE_EVENT_SETTINGS, LIFECYCLE_EXPECTED)).transform((v) => v ?? []),
  STRIPE_PAYMENT_METHODS: optional(paymentMethodsSetting).transform((v) => v ?? ['card']),
  STRIPE_CAPTURE: optional(z.enum(CAPTURE_SETTINGS)).transform((v) => v ?? 'automatic'),
  // Card authorizations lapse after 7 days (168 hours): the cron must act before.
  AUTHORIZATION_EXPIRY_ACTION: optional(z.enum(EXPIRY_ACTIONS)).transform((v) => v ?? 'report'),
  AUTHORIZATION_EXPIRY_HOURS: optional(positiveInt.max(167)).transform((v) => v ?? 144),
  SHIPMENT_TRACKING_META: optional(z.enum(['on', 'off'])).transform((v) => v === 'on'),
  CUSTOMER_MESSAGES: optional(z.enum(CUSTOMER_MESSAGE_SETTINGS)).transform((v) => v ?? 'customer_note'),
  // Signs the companion plugin's calls (docs/decisions.md#d15); as long as a token secret, so it cannot be guessed.
  STORE_CALLBACK_SECRET: optional(z.string().min(32, 'must be at least 32 characters long')),

  CARD_PAYMENT_METHOD_ID: optional(z.string().max(100)).transform((v) => v ?? 'cardprovider'),
  CARD_PAYMENT_METHOD_TITLE: optional(z.string().max(200)).transform((v) => v ?? 'Credit Card (cardprovider)'),
  MANUAL_PAYMENT_METHOD_TITLE: optional(z.string().max(200)).transform(
    (v) => v ?? 'Manual Payment (Zelle / Venmo)',
  ),
});

type Env = z.infer<typeof envSchema>;

export interface StoreSettings {
  url: string;
  /** WOOCOMMERCE_SITE_URL: what OAuth 1.0a signatures cover over http:// when the store is reached at another address. */
  siteUrl?: string;
  consumerKey: string;
  consumerSecret: string;
}

export interface CardSettings {
  secretKey: string;
  /** Empty when STRIPE_WEBHOOK_SECRET is unset; several while a secret is being rolled. */
  webhookSecrets: readonly string[];
  apiBaseUrl: string | undefined;
  /** STRIPE_PAYMENT_METHODS: which methods a new intent offers (card only when absent). */
  paymentMethods?: 'automatic' | readonly string[];
  /** STRIPE_CAPTURE: anything but `automatic` creates intents with manual capture (automatic when absent). */
  capture?: CaptureSetting;
}

export interface TokenSettings {
  secret: string;
  /** The secret before the last rotation: still verifies, never signs. */
  previousSecret: string | undefined;
  issuer: string | undefined;
  audience: string | undefined;
}

export interface Config {
  env: Env['NODE_ENV'];
  isProduction: boolean;
  isDevelopment: boolean;
  store: StoreSettings | undefined;
  card: CardSettings | undefined;
  token: TokenSettings | undefined;
  allowedOrigins: readonly string[];
  trustProxyHops: number;
  /** The header the edge sets with the client's address; only `x-forwarded-for` is read as a list (docs/decisions.md#d5). */
  clientIpHeader: string;
  shipping: {
    /** SHIPPING_WEBHOOK_SECRET: empty when unset; more than one while it is being rotated. */
    webhookSecrets: readonly string[];
    /** SHIPPING_WEBHOOK_AUTH=off: the operator accepts unauthenticated deliveries (docs/decisions.md#d11). */
    unauthenticatedAllowed: boolean;
    apiKey: string | undefined;
    apiSecret: string | undefined;
    apiBaseUrl: string;
  };
  /** ShipStation V2: deliveries signed with the keys at `jwksUrl`, resources read with `apiKey` (docs/integrations/shipstation.md). */
  shippingV2: {
    apiKey: string | undefined;
    apiBaseUrl: string;
    jwksUrl: string;
    /** SHIPPING_DELIVERED_COMPLETES (on by default): a delivered `shipped` order becomes `completed`. */
    deliveredCompletes: boolean;
  };
  /** Shared state across instances (lib/redis/); undefined keeps it in process memory. */
  redisUrl: string | undefined;
  /** Connect and command timeout of the Redis client. */
  redisTimeoutMs: number;
  /** Every key this service writes to Redis starts with it. */
  redisKeyPrefix: string;
  upstreamTimeoutMs: number;
  /** STORE_MAX_CONCURRENCY and its split between callers (lib/shared-state/store-slots/store-slots.ts); undefined: no cap. */
  storeConcurrency: SlotSplit | undefined;
  /** Bearer token of the cron routes and the deep health check; the cron routes refuse to run without it. */
  cronSecret: string | undefined;
  /** SERVICE_URL, else https:// and Vercel's production domain in a production deployment: what the webhook check compares with. */
  serviceUrl?: string | undefined;
  reconcileWindowHours: number;
  /** How far back shipment reconciliation reads ShipStation's shipments. */
  shipmentReconcileWindowHours: number;
  paymentMethods: {
    cardId: string;
    cardTitle: string;
    manualTitle: string;
  };
  /** STRIPE_CAPTURE: when card payments are captured (`automatic`: the spec, at once). */
  capture: CaptureSetting;
  /** What the expiry cron does with an authorization older than `ageHours` that is still uncaptured. */
  authorizationExpiry: { action: (typeof EXPIRY_ACTIONS)[number]; ageHours: number };
  /** SHIPMENT_TRACKING_META=on: packages are also written as `_wc_shipment_tracking_items` (off by default: the spec's writes). */
  shipmentTrackingMeta: boolean;
  /** CUSTOMER_MESSAGES: the service's messages to the customer in `customer_note` (the spec) or as customer order notes. */
  customerMessages: CustomerMessageSetting;
  /** STORE_CALLBACK_SECRET: signs the store's calls to /api/store/*; unset, those routes refuse (503). */
  storeCallbackSecret: string | undefined;
  /** CARD_LIFECYCLE_EVENTS: which card events after the payment change orders (empty: the spec's behaviour). */
  lifecycleEvents: ReadonlySet<LifecycleEventSetting>;
  /** Names of the variables that were expected but not set (never their values). */
  missing: readonly string[];
  /** Names of the variables that still hold .env.example's placeholder (refused in production). */
  placeholders: readonly string[];
  /** Human-readable warnings to log at start (names and facts only, never values). */
  warnings: readonly string[];
}

const STORE_VARS = ['WOOCOMMERCE_URL', 'WOOCOMMERCE_CONSUMER_KEY', 'WOOCOMMERCE_CONSUMER_SECRET'] as const;
const CARD_VARS = ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const;
const TOKEN_VARS = ['CHECKOUT_TOKEN_SECRET'] as const;

/** The upstreams' variables: the store's and the card provider's. The demo runs exactly when none holds a value of its own. */
export const UPSTREAM_VARIABLES: readonly string[] = [...STORE_VARS, ...CARD_VARS];

/**
 * The values .env.example ships where a shop's own belong. A `.env.local`
 * copied from it and not filled in still holds them; the service must then
 * never call shop.example.com as if it were the shop. (tests/unit/config-mode.test.ts
 * keeps this list and the file in step.)
 */
export const EXAMPLE_PLACEHOLDERS: Readonly<Record<string, string>> = {
  WOOCOMMERCE_URL: 'https://shop.example.com',
  ALLOWED_ORIGINS: 'https://shop.example.com,https://www.shop.example.com',
};

/** The variables that still hold .env.example's placeholder, unchanged. */
export function placeholderVariables(source: Record<string, string | undefined>): string[] {
  return Object.entries(EXAMPLE_PLACEHOLDERS)
    .filter(([name, placeholder]) => source[name]?.trim() === placeholder)
    .map(([name]) => name);
}

/** Names them: a list of names, or the names already written out (with where each is set). */
export const placeholderMessage = (names: readonly string[] | string) =>
  `these variables still hold the example's placeholders: ${typeof names === 'string' ? names : names.join(', ')}`;

export interface StartMode {
  /** The demo (local stand-ins for the store and the card provider) runs. */
  demo: boolean;
  /** Why, in a few words. */
  why: 'production' | 'upstream configured' | 'no upstream configured';
  /** Upstream variables holding a value of their own (not empty, not the example's placeholder). */
  configured: string[];
  placeholders: string[];
}

/**
 * Demo or configured: the demo runs exactly when no upstream is configured,
 * and never in production. A placeholder left from .env.example configures nothing.
 */
export function startMode(source: Record<string, string | undefined>): StartMode {
  const placeholders = placeholderVariables(source);
  const configured = UPSTREAM_VARIABLES.filter((name) => (source[name] ?? '').trim() !== '' && !placeholders.includes(name));
  if (source.NODE_ENV === 'production') return { demo: false, why: 'production', configured, placeholders };
  if (configured.length > 0) return { demo: false, why: 'upstream configured', configured, placeholders };
  return { demo: true, why: 'no upstream configured', configured, placeholders };
}

function parseOrigins(raw: string | undefined): { origins: string[]; invalid: boolean } {
  if (!raw) return { origins: [], invalid: false };
  const origins: string[] = [];
  let invalid = false;
  for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    try {
      const url = new URL(entry);
      // An origin is scheme://host[:port] and nothing else.
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== entry.replace(/\/$/, '')) {
        invalid = true;
        continue;
      }
      origins.push(url.origin);
    } catch {
      invalid = true;
    }
  }
  return { origins, invalid };
}

const URL_EXPECTED = 'must be an http:// or https:// URL';

/**
 * What each variable must be, in the service's words: zod's own texts ("expected
 * number, received NaN") mean nothing to an operator. Refinements written here
 * (prefixes, lengths) carry their own message and are used as they are.
 */
const EXPECTED: Partial<Record<keyof Env, string>> = {
  NODE_ENV: 'must be development, production or test',
  WOOCOMMERCE_URL: URL_EXPECTED,
  WOOCOMMERCE_SITE_URL: SITE_URL_EXPECTED,
  STRIPE_API_BASE_URL: URL_EXPECTED,
  SHIPSTATION_API_BASE_URL: URL_EXPECTED,
  SHIPSTATION_V2_API_BASE_URL: URL_EXPECTED,
  SHIPSTATION_V2_JWKS_URL: URL_EXPECTED,
  TRUST_PROXY_HOPS: 'must be a whole number from 1 to 10',
  REDIS_URL: 'must be a redis:// or rediss:// URL',
  UPSTREAM_TIMEOUT_MS: 'must be a whole number of milliseconds from 1 to 120000',
  STORE_MAX_CONCURRENCY: 'must be a whole number of concurrent store calls from 1 to 1000',
  RECONCILE_WINDOW_HOURS: 'must be a whole number of hours from 1 to 720 (the card provider keeps events for 30 days)',
  SHIPMENT_RECONCILE_WINDOW_HOURS: 'must be a whole number of hours from 1 to 720',
  CARD_PAYMENT_METHOD_ID: 'must be at most 100 characters long',
  CARD_PAYMENT_METHOD_TITLE: 'must be at most 200 characters long',
  MANUAL_PAYMENT_METHOD_TITLE: 'must be at most 200 characters long',
  STRIPE_CAPTURE: `must be ${CAPTURE_SETTINGS.join(', ')} (or unset)`,
  AUTHORIZATION_EXPIRY_ACTION: `must be ${EXPIRY_ACTIONS.join(' or ')} (or unset)`,
  AUTHORIZATION_EXPIRY_HOURS: 'must be a whole number of hours from 1 to 167 (authorizations lapse after 168)',
  SHIPMENT_TRACKING_META: 'must be on or off (or unset)',
  SERVICE_URL: URL_EXPECTED,
  SHIPPING_DELIVERED_COMPLETES: 'must be on or off (or unset)',
  CUSTOMER_MESSAGES: `must be ${CUSTOMER_MESSAGE_SETTINGS.join(' or ')} (or unset)`,
};

function malformedVariables(issues: readonly z.core.$ZodIssue[]): string[] {
  const byName = new Map<string, string>();
  for (const issue of issues) {
    const name = String(issue.path[0] ?? '(environment)');
    if (byName.has(name)) continue;
    const own = issue.code === 'custom' || (issue.code === 'too_small' && issue.origin === 'string');
    byName.set(name, own ? issue.message : (EXPECTED[name as keyof Env] ?? 'is malformed'));
  }
  return [...byName].map(([name, expected]) => `${name} ${expected}`);
}

/** Unset or empty in the raw environment (an empty `FOO=` counts as unset). */
function unsetIn(source: Record<string, string | undefined>, names: readonly string[]): string[] {
  return names.filter((name) => (source[name] ?? '').trim() === '');
}

/**
 * Parses an environment into a Config, or throws one ConfigError naming every
 * missing and every malformed variable together (a malformed one never hides
 * a missing one) and never a value.
 */
export function parseConfig(source: Record<string, string | undefined>): Config {
  const result = envSchema.safeParse(source);
  const problems: string[] = [];
  const isProductionEnv = source.NODE_ENV === 'production';
  const missing = unsetIn(source, [...STORE_VARS, ...CARD_VARS, ...TOKEN_VARS]);
  if (isProductionEnv && missing.length > 0) {
    problems.push(`missing ${missing.join(', ')} (required when NODE_ENV=production)`);
  }
  // An unauthenticated shipping webhook lets anyone mark paid orders shipped and write into
  // the note the customer reads (docs/decisions.md#d11): production needs the secret or an explicit opt-out.
  if (isProductionEnv && unsetIn(source, ['SHIPPING_WEBHOOK_SECRET']).length > 0 && source.SHIPPING_WEBHOOK_AUTH?.trim() !== 'off') {
    problems.push(
      'missing SHIPPING_WEBHOOK_SECRET (required when NODE_ENV=production; set SHIPPING_WEBHOOK_AUTH=off to accept unauthenticated shipping notifications)',
    );
  }
  const placeholders = placeholderVariables(source);
  if (isProductionEnv && placeholders.length > 0) problems.push(`${placeholderMessage(placeholders)} (set your shop's own values)`);
  if (!result.success) problems.push(...malformedVariables(result.error.issues));
  const { origins, invalid: originsInvalid } = parseOrigins(result.success ? result.data.ALLOWED_ORIGINS : source.ALLOWED_ORIGINS);
  if (originsInvalid) {
    problems.push(
      'ALLOWED_ORIGINS must be a comma-separated list of origins such as https://shop.example.com (scheme, host and optional port, no path)',
    );
  }
  const slots = result.success ? storeSplit(result.data.STORE_MAX_CONCURRENCY, result.data.STORE_RESERVED_SLOTS) : undefined;
  if (slots && 'problem' in slots) problems.push(slots.problem);
  if (problems.length > 0 || !result.success) {
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const env = result.data;

  const isProduction = env.NODE_ENV === 'production';
  const storeConcurrency = slots && 'split' in slots ? slots.split : undefined;

  const warnings: string[] = [];
  if (env.STORE_RESERVED_SLOTS && !storeConcurrency) {
    warnings.push('STORE_RESERVED_SLOTS is set without STORE_MAX_CONCURRENCY: there is no cap to split, so it has no effect');
  }
  if (isProduction) {
    if (env.WOOCOMMERCE_URL?.startsWith('http://')) {
      warnings.push('WOOCOMMERCE_URL uses http://: requests are signed with OAuth 1.0a but travel unencrypted');
    }
    if (env.STRIPE_API_BASE_URL?.startsWith('http://')) {
      warnings.push('STRIPE_API_BASE_URL uses http://: card-provider calls travel unencrypted');
    }
    if (!env.SHIPPING_WEBHOOK_SECRET) {
      warnings.push(
        'SHIPPING_WEBHOOK_SECRET is not set and SHIPPING_WEBHOOK_AUTH=off: anyone who knows the URL can mark paid orders shipped and write into the customer note',
      );
    }
    if (origins.length === 0) {
      warnings.push('ALLOWED_ORIGINS is empty: every checkout request will be refused as coming from an invalid origin');
    }
    if (!env.CRON_SECRET) {
      warnings.push('CRON_SECRET is not set: payment reconciliation and shipping replay refuse to run');
    }
    if (!env.REDIS_URL) {
      // One warning for one missing setting: what it costs across instances, and what it costs on a restart.
      warnings.push(
        'REDIS_URL is not set: rate limits, order locks and processed events are kept per instance (set it when more than one instance runs: every serverless deployment), and the shipping replay queue and the reconciliation cursor live in process memory and are lost when the process ends (not durable)',
      );
    }
  }
  if (env.STRIPE_PAYMENT_METHODS === 'automatic' && !env.CARD_LIFECYCLE_EVENTS.includes('async')) {
    warnings.push(
      'STRIPE_PAYMENT_METHODS=automatic without async in CARD_LIFECYCLE_EVENTS: a delayed method (bank debit) enabled in the Stripe dashboard leaves its order pending until the money arrives',
    );
  }
  if (env.WOOCOMMERCE_SITE_URL && env.WOOCOMMERCE_URL && !env.WOOCOMMERCE_URL.startsWith('http://')) {
    warnings.push('WOOCOMMERCE_SITE_URL is set but WOOCOMMERCE_URL uses https://: requests carry the keys, not an OAuth signature, so it has no effect');
  }
  if (Boolean(env.SHIPSTATION_API_KEY) !== Boolean(env.SHIPSTATION_API_SECRET)) {
    warnings.push('only one of SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET is set: resource_url deliveries will be ignored');
  }

  const store =
    env.WOOCOMMERCE_URL && env.WOOCOMMERCE_CONSUMER_KEY && env.WOOCOMMERCE_CONSUMER_SECRET
      ? {
          url: env.WOOCOMMERCE_URL,
          ...(env.WOOCOMMERCE_SITE_URL ? { siteUrl: env.WOOCOMMERCE_SITE_URL } : {}),
          consumerKey: env.WOOCOMMERCE_CONSUMER_KEY,
          consumerSecret: env.WOOCOMMERCE_CONSUMER_SECRET,
        }
      : undefined;
  const card = env.STRIPE_SECRET_KEY
    ? {
        secretKey: env.STRIPE_SECRET_KEY,
        webhookSecrets: env.STRIPE_WEBHOOK_SECRET ?? [],
        apiBaseUrl: env.STRIPE_API_BASE_URL,
        paymentMethods: env.STRIPE_PAYMENT_METHODS,
        capture: env.STRIPE_CAPTURE,
      }
    : undefined;
  const token = env.CHECKOUT_TOKEN_SECRET
    ? {
        secret: env.CHECKOUT_TOKEN_SECRET,
        previousSecret: env.CHECKOUT_TOKEN_SECRET_PREVIOUS,
        issuer: env.CHECKOUT_TOKEN_ISSUER,
        audience: env.CHECKOUT_TOKEN_AUDIENCE,
      }
    : undefined;

  return {
    env: env.NODE_ENV,
    isProduction,
    isDevelopment: env.NODE_ENV === 'development',
    store,
    card,
    token,
    allowedOrigins: origins,
    trustProxyHops: env.TRUST_PROXY_HOPS,
    clientIpHeader: env.CLIENT_IP_HEADER,
    shipping: {
      webhookSecrets: env.SHIPPING_WEBHOOK_SECRET ?? [],
      unauthenticatedAllowed: env.SHIPPING_WEBHOOK_AUTH === 'off',
      apiKey: env.SHIPSTATION_API_KEY,
      apiSecret: env.SHIPSTATION_API_SECRET,
      apiBaseUrl: env.SHIPSTATION_API_BASE_URL,
    },
    shippingV2: {
      apiKey: env.SHIPSTATION_V2_API_KEY,
      apiBaseUrl: env.SHIPSTATION_V2_API_BASE_URL,
      jwksUrl: env.SHIPSTATION_V2_JWKS_URL,
      deliveredCompletes: env.SHIPPING_DELIVERED_COMPLETES,
    },
    redisUrl: env.REDIS_URL,
    redisTimeoutMs: env.REDIS_TIMEOUT_MS,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
    storeConcurrency,
    cronSecret: env.CRON_SECRET,
    serviceUrl: env.SERVICE_URL ?? vercelProductionUrl(env.VERCEL_ENV, env.VERCEL_PROJECT_PRODUCTION_URL),
    reconcileWindowHours: env.RECONCILE_WINDOW_HOURS,
    shipmentReconcileWindowHours: env.SHIPMENT_RECONCILE_WINDOW_HOURS,
    paymentMethods: {
      cardId: env.CARD_PAYMENT_METHOD_ID,
      cardTitle: env.CARD_PAYMENT_METHOD_TITLE,
      manualTitle: env.MANUAL_PAYMENT_METHOD_TITLE,
    },
    capture: env.STRIPE_CAPTURE,
    authorizationExpiry: { action: env.AUTHORIZATION_EXPIRY_ACTION, ageHours: env.AUTHORIZATION_EXPIRY_HOURS },
    shipmentTrackingMeta: env.SHIPMENT_TRACKING_META,
    customerMessages: env.CUSTOMER_MESSAGES,
    storeCallbackSecret: env.STORE_CALLBACK_SECRET,
    lifecycleEvents: new Set(env.CARD_LIFECYCLE_EVENTS),
    missing,
    placeholders,
    warnings,
  };
}

/** Vercel's production domain (no scheme), only in a production deployment: a preview has no webhook of its own. */
function vercelProductionUrl(vercelEnv: string | undefined, domain: string | undefined): string | undefined {
  if (vercelEnv !== 'production' || !domain || !/^[a-z0-9.-]+(:\d+)?$/i.test(domain)) return undefined;
  return `https://${domain.toLowerCase()}`;
}

/** The cap and its split; a split that would leave no slot unreserved is a problem named with the others. */
function storeSplit(
  limit: number | undefined,
  reserved: Partial<Record<ReservingCaller, number>> | undefined,
): { split: SlotSplit } | { problem: string } | undefined {
  if (limit === undefined) return undefined;
  const split = { limit, reserved: { ...defaultReserve(limit), ...reserved } };
  if (split.reserved.checkout + split.reserved.webhook >= limit) {
    return {
      problem: `STORE_RESERVED_SLOTS must leave at least one of the ${limit} slots of STORE_MAX_CONCURRENCY unreserved (for the crons and first-come callers)`,
    };
  }
  return { split };
}

let cached: Config | undefined;

/** The process's configuration, parsed on first use. */
export function getConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** Forgets the parsed configuration, so the next getConfig() reads process.env again (tests). */
export function resetConfig(): void {
  cached = undefined;
}

/** Returns a configured part, or throws a ServiceNotConfiguredError naming the variables it needs. */
export function requireSetting<K extends 'store' | 'card' | 'token'>(config: Config, part: K): NonNullable<Config[K]> {
  const value = config[part];
  if (value) return value as NonNullable<Config[K]>;
  const names = { store: STORE_VARS, card: ['STRIPE_SECRET_KEY'], token: TOKEN_VARS }[part];
  throw new ServiceNotConfiguredError(`The service is not configured: set ${names.join(', ')}`);
}
