/**
 * The service's configuration: `process.env` parsed once with zod, each variable's message in its schema.
 * What each variable means: docs/operations.md#configuration.
 */
import { z } from 'zod';
import { ConfigError, ServiceNotConfiguredError } from '@/lib/errors';

export const STORE_CALLERS = ['checkout', 'webhook', 'background'] as const;
export type StoreCaller = (typeof STORE_CALLERS)[number];
/** Background work takes the slots left unreserved. */
export type ReservingCaller = Exclude<StoreCaller, 'background'>;

export interface SlotSplit {
  limit: number;
  reserved: Record<ReservingCaller, number>;
}

export function defaultReserve(limit: number): Record<ReservingCaller, number> {
  return { checkout: Math.floor(limit / 2), webhook: Math.floor(limit / 4) };
}

export const LIFECYCLE_EVENT_SETTINGS = ['refunds', 'disputes', 'async', 'reviews'] as const;
export type LifecycleEventSetting = (typeof LIFECYCLE_EVENT_SETTINGS)[number];
export const CAPTURE_SETTINGS = ['automatic', 'on_shipment', 'manual'] as const;
export type CaptureSetting = (typeof CAPTURE_SETTINGS)[number];
export const CUSTOMER_MESSAGE_SETTINGS = ['customer_note', 'order_notes'] as const;
export type CustomerMessageSetting = (typeof CUSTOMER_MESSAGE_SETTINGS)[number];
export const EXPIRY_ACTIONS = ['report', 'capture'] as const;
export const UPSTREAM_TIMEOUT_DEFAULT_MS = 10_000;

/** What each part needs, all of it required in production. */
export const REQUIRED_VARIABLES = {
  store: ['WOOCOMMERCE_URL', 'WOOCOMMERCE_CONSUMER_KEY', 'WOOCOMMERCE_CONSUMER_SECRET'],
  card: ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'],
  token: ['CHECKOUT_TOKEN_SECRET'],
} as const;

/** An empty variable (`FOO=` in a .env file) counts as unset. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const URL_EXPECTED = 'must be an http:// or https:// URL';
const httpUrl = (error: string) => z.url({ protocol: /^https?$/, error }).transform((v) => v.replace(/\/+$/, ''));
const baseUrl = httpUrl(URL_EXPECTED);
const SITE_URL_EXPECTED = "must be an http:// or https:// URL without query or fragment: the store's Site Address (WordPress Settings → General)";

/** Without a message of its own, a malformed variable reads "is malformed" (parseConfig's default). */
const wholeNumber = (max: number, error?: string) => z.coerce.number(error ? { error } : undefined).int().min(1).max(max);
const choice = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be ${values.length === 2 ? values.join(' or ') : values.join(', ')} (or unset)` });
const onOff = choice(['on', 'off']);

const prefixed = (prefixes: string[]) =>
  z.string().refine((v) => prefixes.some((p) => v.startsWith(p)), {
    error: `must start with ${prefixes.map((p) => `"${p}"`).join(' or ')}`,
  });

const tokenSecret = z.string().refine((v) => Buffer.byteLength(v, 'utf8') >= 32, { error: 'must be at least 32 bytes long' });

const commaList = (lowerCase = false) =>
  z.string().transform((v) => v.split(',').map((s) => (lowerCase ? s.trim().toLowerCase() : s.trim())).filter(Boolean));

const webhookSecrets = commaList().refine((list) => list.length > 0 && list.every((s) => s.startsWith('whsec_')), {
  error: 'must be one or more comma-separated secrets, each starting with "whsec_"',
});

/** A secret cannot hold a comma: several are accepted while one is being rotated. */
const sharedSecrets = commaList().refine((list) => list.length > 0 && list.every((s) => s.length >= 16), {
  error: 'must be one or more comma-separated secrets, each at least 16 characters long',
});

const lifecycleEvents = commaList(true)
  .refine((list) => list.every((word) => (LIFECYCLE_EVENT_SETTINGS as readonly string[]).includes(word)), {
    error: `must be a comma-separated list of ${LIFECYCLE_EVENT_SETTINGS.join(', ')} (or empty)`,
  })
  .transform((list) => [...new Set(list)] as LifecycleEventSetting[]);

const paymentMethods = commaList(true)
  .refine(
    (list) =>
      list.length > 0 &&
      (list.length === 1 && list[0] === 'automatic' ? true : list.every((type) => type !== 'automatic' && /^[a-z][a-z0-9_]{0,49}$/.test(type))),
    { error: 'must be "automatic" or a comma-separated list of payment method types such as card or card,link' },
  )
  .transform((list) => (list[0] === 'automatic' ? ('automatic' as const) : [...new Set(list)]));

const reservedSlots = commaList(true)
  .refine((list) => list.every((entry) => /^(checkout|webhook):\d{1,4}$/.test(entry)), {
    error: 'must be checkout:<slots>,webhook:<slots> (either may be left out)',
  })
  .transform((list) => Object.fromEntries(list.map((entry) => entry.split(':')).map(([caller, n]) => [caller, Number(n)])) as Partial<Record<ReservingCaller, number>>);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test'], { error: 'must be development, production or test' }).default('development'),

  WOOCOMMERCE_URL: optional(baseUrl),
  WOOCOMMERCE_SITE_URL: optional(httpUrl(SITE_URL_EXPECTED).refine((v) => !/[?#@]/.test(v.replace(/^\w+:\/\//, '')), { error: SITE_URL_EXPECTED })),
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
  TRUST_PROXY_HOPS: optional(wholeNumber(10, 'must be a whole number from 1 to 10')).transform((v) => v ?? 1),
  CLIENT_IP_HEADER: optional(z.string().trim().toLowerCase().regex(/^[a-z0-9-]{1,100}$/)).transform((v) => v ?? 'x-forwarded-for'),

  SHIPPING_WEBHOOK_SECRET: optional(sharedSecrets),
  SHIPPING_WEBHOOK_AUTH: optional(z.enum(['off'])),
  SHIPSTATION_API_KEY: optional(z.string()),
  SHIPSTATION_API_SECRET: optional(z.string()),
  SHIPSTATION_API_BASE_URL: optional(baseUrl).transform((v) => v ?? 'https://ssapi.shipstation.com'),
  SHIPSTATION_V2_API_KEY: optional(z.string()),
  SHIPSTATION_V2_API_BASE_URL: optional(baseUrl).transform((v) => v ?? 'https://api.shipstation.com'),
  SHIPSTATION_V2_JWKS_URL: optional(baseUrl).transform((v) => v ?? 'https://api.shipengine.com/jwks'),
  SHIPPING_DELIVERED_COMPLETES: optional(onOff).transform((v) => v !== 'off'),

  REDIS_URL: optional(z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })),
  REDIS_TIMEOUT_MS: optional(wholeNumber(10_000)).transform((v) => v ?? 500),
  REDIS_KEY_PREFIX: optional(z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/)).transform((v) => v ?? 'checkout:'),
  UPSTREAM_TIMEOUT_MS: optional(wholeNumber(120_000, 'must be a whole number of milliseconds from 1 to 120000')).transform(
    (v) => v ?? UPSTREAM_TIMEOUT_DEFAULT_MS,
  ),
  STORE_MAX_CONCURRENCY: optional(wholeNumber(1000, 'must be a whole number of concurrent store calls from 1 to 1000')),
  STORE_RESERVED_SLOTS: optional(reservedSlots),

  CRON_SECRET: optional(z.string().min(16, { error: 'must be at least 16 characters long' })),
  SERVICE_URL: optional(baseUrl),
  VERCEL_ENV: optional(z.string()),
  VERCEL_PROJECT_PRODUCTION_URL: optional(z.string()),
  RECONCILE_WINDOW_HOURS: optional(
    wholeNumber(720, 'must be a whole number of hours from 1 to 720 (the card provider keeps events for 30 days)'),
  ).transform((v) => v ?? 72),
  SHIPMENT_RECONCILE_WINDOW_HOURS: optional(wholeNumber(720, 'must be a whole number of hours from 1 to 720')).transform((v) => v ?? 72),

  CARD_LIFECYCLE_EVENTS: optional(lifecycleEvents).transform((v) => v ?? []),
  STRIPE_PAYMENT_METHODS: optional(paymentMethods).transform((v) => v ?? ['card']),
  STRIPE_CAPTURE: optional(choice(CAPTURE_SETTINGS)).transform((v) => v ?? 'automatic'),
  AUTHORIZATION_EXPIRY_ACTION: optional(choice(EXPIRY_ACTIONS)).transform((v) => v ?? 'report'),
  // Card authorizations lapse after 168 hours: the cron must act before.
  AUTHORIZATION_EXPIRY_HOURS: optional(
    wholeNumber(167, 'must be a whole number of hours from 1 to 167 (authorizations lapse after 168)'),
  ).transform((v) => v ?? 144),
  SHIPMENT_TRACKING_META: optional(onOff).transform((v) => v === 'on'),
  CUSTOMER_MESSAGES: optional(choice(CUSTOMER_MESSAGE_SETTINGS)).transform((v) => v ?? 'customer_note'),
  STORE_CALLBACK_SECRET: optional(z.string().min(32, { error: 'must be at least 32 characters long' })),

  CARD_PAYMENT_METHOD_ID: optional(z.string({ error: 'must be at most 100 characters long' }).max(100)).transform((v) => v ?? 'cardprovider'),
  CARD_PAYMENT_METHOD_TITLE: optional(z.string({ error: 'must be at most 200 characters long' }).max(200)).transform(
    (v) => v ?? 'Credit Card (cardprovider)',
  ),
  MANUAL_PAYMENT_METHOD_TITLE: optional(z.string({ error: 'must be at most 200 characters long' }).max(200)).transform(
    (v) => v ?? 'Manual Payment (Zelle / Venmo)',
  ),
});

type Env = z.infer<typeof envSchema>;

export interface StoreSettings {
  url: string;
  siteUrl?: string;
  consumerKey: string;
  consumerSecret: string;
}

export interface CardSettings {
  secretKey: string;
  webhookSecrets: readonly string[];
  apiBaseUrl: string | undefined;
  paymentMethods?: 'automatic' | readonly string[];
  capture?: CaptureSetting;
}

export interface TokenSettings {
  secret: string;
  /** Still verifies, never signs. */
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
  clientIpHeader: string;
  shipping: {
    webhookSecrets: readonly string[];
    unauthenticatedAllowed: boolean;
    apiKey: string | undefined;
    apiSecret: string | undefined;
    apiBaseUrl: string;
  };
  shippingV2: {
    apiKey: string | undefined;
    apiBaseUrl: string;
    jwksUrl: string;
    deliveredCompletes: boolean;
  };
  redisUrl: string | undefined;
  redisTimeoutMs: number;
  redisKeyPrefix: string;
  upstreamTimeoutMs: number;
  /** Undefined: no cap. */
  storeConcurrency: SlotSplit | undefined;
  cronSecret: string | undefined;
  serviceUrl?: string | undefined;
  reconcileWindowHours: number;
  shipmentReconcileWindowHours: number;
  paymentMethods: {
    cardId: string;
    cardTitle: string;
    manualTitle: string;
  };
  capture: CaptureSetting;
  authorizationExpiry: { action: (typeof EXPIRY_ACTIONS)[number]; ageHours: number };
  shipmentTrackingMeta: boolean;
  customerMessages: CustomerMessageSetting;
  storeCallbackSecret: string | undefined;
  lifecycleEvents: ReadonlySet<LifecycleEventSetting>;
  /** Names only, never values, like every field below. */
  missing: readonly string[];
  placeholders: readonly string[];
  warnings: readonly string[];
}

/**
 * The values .env.example ships where a shop's own belong: a copy not filled in must never make the
 * service call shop.example.com as if it were the shop (tests/unit/config-mode.test.ts keeps them in step).
 */
export const EXAMPLE_PLACEHOLDERS: Readonly<Record<string, string>> = {
  WOOCOMMERCE_URL: 'https://shop.example.com',
  ALLOWED_ORIGINS: 'https://shop.example.com,https://www.shop.example.com',
};

export function placeholderVariables(source: Record<string, string | undefined>): string[] {
  return Object.entries(EXAMPLE_PLACEHOLDERS)
    .filter(([name, placeholder]) => source[name]?.trim() === placeholder)
    .map(([name]) => name);
}

/** Names them: a list of names, or the names already written out (with where each is set). */
export const placeholderMessage = (names: readonly string[] | string) =>
  `these variables still hold the example's placeholders: ${typeof names === 'string' ? names : names.join(', ')}`;

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

/** The first message of each malformed variable, named. */
function malformedVariables(issues: readonly z.core.$ZodIssue[]): string[] {
  const byName = new Map<string, string>();
  for (const issue of issues) {
    const name = String(issue.path[0] ?? '(environment)');
    if (!byName.has(name)) byName.set(name, issue.message);
  }
  return [...byName].map(([name, expected]) => `${name} ${expected}`);
}

/** Unset or empty in the raw environment (an empty `FOO=` counts as unset). */
function unsetIn(source: Record<string, string | undefined>, names: readonly string[]): string[] {
  return names.filter((name) => (source[name] ?? '').trim() === '');
}

/** A Config, or one ConfigError naming every missing and every malformed variable together, never a value. */
export function parseConfig(source: Record<string, string | undefined>): Config {
  const config = readConfig(source);
  if (config instanceof ConfigError) throw config;
  return config;
}

function readConfig(source: Record<string, string | undefined>): Config | ConfigError {
  // zod's own texts ("expected number, received NaN") mean nothing to an operator.
  const result = envSchema.safeParse(source, { error: () => 'is malformed' });
  const problems: string[] = [];
  const isProductionEnv = source.NODE_ENV === 'production';
  const missing = unsetIn(source, [...REQUIRED_VARIABLES.store, ...REQUIRED_VARIABLES.card, ...REQUIRED_VARIABLES.token]);
  if (isProductionEnv && missing.length > 0) {
    problems.push(`missing ${missing.join(', ')} (required when NODE_ENV=production)`);
  }
  // Unauthenticated, anyone could mark paid orders shipped (docs/decisions.md#d11): production needs the secret or an explicit opt-out.
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
    return new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const env = result.data;

  const isProduction = env.NODE_ENV === 'production';
  const storeConcurrency = slots && 'split' in slots ? slots.split : undefined;

  const warnings = (
    [
      [env.STORE_RESERVED_SLOTS && !storeConcurrency, 'STORE_RESERVED_SLOTS is set without STORE_MAX_CONCURRENCY: there is no cap to split, so it has no effect'],
      [isProduction && env.WOOCOMMERCE_URL?.startsWith('http://'), 'WOOCOMMERCE_URL uses http://: requests are signed with OAuth 1.0a but travel unencrypted'],
      [isProduction && env.STRIPE_API_BASE_URL?.startsWith('http://'), 'STRIPE_API_BASE_URL uses http://: card-provider calls travel unencrypted'],
      [
        isProduction && !env.SHIPPING_WEBHOOK_SECRET,
        'SHIPPING_WEBHOOK_SECRET is not set and SHIPPING_WEBHOOK_AUTH=off: anyone who knows the URL can mark paid orders shipped and write into the customer note',
      ],
      [isProduction && origins.length === 0, 'ALLOWED_ORIGINS is empty: every checkout request will be refused as coming from an invalid origin'],
      [isProduction && !env.CRON_SECRET, 'CRON_SECRET is not set: payment reconciliation and shipping replay refuse to run'],
      [
        isProduction && !env.REDIS_URL,
        'REDIS_URL is not set: rate limits, order locks and processed events are kept per instance (set it when more than one instance runs: every serverless deployment), and the shipping replay queue and the reconciliation cursor live in process memory and are lost when the process ends (not durable)',
      ],
      [
        env.STRIPE_PAYMENT_METHODS === 'automatic' && !env.CARD_LIFECYCLE_EVENTS.includes('async'),
        'STRIPE_PAYMENT_METHODS=automatic without async in CARD_LIFECYCLE_EVENTS: a delayed method (bank debit) enabled in the Stripe dashboard leaves its order pending until the money arrives',
      ],
      [
        env.WOOCOMMERCE_SITE_URL && env.WOOCOMMERCE_URL && !env.WOOCOMMERCE_URL.startsWith('http://'),
        'WOOCOMMERCE_SITE_URL is set but WOOCOMMERCE_URL uses https://: requests carry the keys, not an OAuth signature, so it has no effect',
      ],
      [
        Boolean(env.SHIPSTATION_API_KEY) !== Boolean(env.SHIPSTATION_API_SECRET),
        'only one of SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET is set: resource_url deliveries will be ignored',
      ],
    ] as const
  )
    .filter(([when]) => when)
    .map(([, warning]) => warning);

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

/** The process's configuration, parsed on first use (at start: lib/startup.ts); an invalid one is read again each time. */
function current(): Config | ConfigError {
  if (cached) return cached;
  const config = readConfig(process.env);
  if (!(config instanceof ConfigError)) cached = config;
  return config;
}

export function getConfig(): Config {
  const config = current();
  if (config instanceof ConfigError) throw config;
  return config;
}

/** Undefined while the configuration is invalid: the HTTP layer then answers with its defaults, and getConfig() says why. */
export function configIfValid(): Config | undefined {
  const config = current();
  return config instanceof ConfigError ? undefined : config;
}

/** Forgets the parsed configuration, so the next getConfig() reads process.env again (tests). */
export function resetConfig(): void {
  cached = undefined;
}

/** Returns a configured part, or throws a ServiceNotConfiguredError naming the variables it needs. */
export function requireSetting<K extends 'store' | 'card' | 'token'>(config: Config, part: K): NonNullable<Config[K]> {
  const value = config[part];
  if (value) return value as NonNullable<Config[K]>;
  const names = part === 'card' ? ['STRIPE_SECRET_KEY'] : REQUIRED_VARIABLES[part];
  throw new ServiceNotConfiguredError(`The service is not configured: set ${names.join(', ')}`);
}
