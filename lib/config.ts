/**
 * The service's configuration: `process.env` parsed once with zod, each variable's message in its schema.
 * What each variable means: docs/operations.md#configuration.
 */
import { z } from 'zod';
import { ConfigError, ServiceNotConfiguredError } from '@/lib/errors';

export type StoreCaller = 'checkout' | 'webhook' | 'background';
export interface SlotSplit {
  limit: number;
  /** Background work takes the slots left unreserved. */
  reserved: Record<Exclude<StoreCaller, 'background'>, number>;
}

export function defaultReserve(limit: number): SlotSplit['reserved'] {
  return { checkout: Math.floor(limit / 2), webhook: Math.floor(limit / 4) };
}

export const LIFECYCLE_EVENT_SETTINGS = ['refunds', 'disputes', 'async', 'reviews'] as const;
export type LifecycleEventSetting = (typeof LIFECYCLE_EVENT_SETTINGS)[number];
export type CaptureSetting = 'automatic' | 'on_shipment' | 'manual';
export type CustomerMessageSetting = 'customer_note' | 'order_notes';
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
/** Unset or empty, the variable reads `fallback`. */
const defaulted = <T extends z.ZodType>(schema: T, fallback: NonNullable<z.output<T>>) =>
  optional(schema).transform((v) => (v ?? fallback) as NonNullable<z.output<T>>);

/** An origin is scheme://host[:port] and nothing else: undefined for anything more. */
function originOf(entry: string): string | undefined {
  const url = URL.canParse(entry) ? new URL(entry) : undefined;
  return url && /^https?:$/.test(url.protocol) && url.origin === entry.replace(/\/$/, '') ? url.origin : undefined;
}

const httpUrl = (error: string) => z.url({ protocol: /^https?$/, error }).transform((v) => v.replace(/\/+$/, ''));
const baseUrl = httpUrl('must be an http:// or https:// URL');
const SITE_URL_EXPECTED = "must be an http:// or https:// URL without query or fragment: the store's Site Address (WordPress Settings → General)";
/** Without a message of its own, a malformed variable reads "is malformed" (parseConfig's default). */
const wholeNumber = (max: number, error?: string) => z.coerce.number(error ? { error } : undefined).int().min(1).max(max);
const hours = (max: number, why = '') => wholeNumber(max, `must be a whole number of hours from 1 to ${max}${why}`);
const choice = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be ${values.length === 2 ? values.join(' or ') : values.join(', ')} (or unset)` });
const onOff = choice(['on', 'off']);
const atMost = (max: number) => z.string({ error: `must be at most ${max} characters long` }).max(max);
const atLeast = (min: number) => z.string().min(min, { error: `must be at least ${min} characters long` });
const prefixed = (prefixes: string[]) =>
  z.string().refine((v) => prefixes.some((p) => v.startsWith(p)), {
    error: `must start with ${prefixes.map((p) => `"${p}"`).join(' or ')}`,
  });
const tokenSecret = z.string().refine((v) => Buffer.byteLength(v, 'utf8') >= 32, { error: 'must be at least 32 bytes long' });
const commaList = (lowerCase = false) =>
  z.string().transform((v) => v.split(',').map((s) => (lowerCase ? s.trim().toLowerCase() : s.trim())).filter(Boolean));

/** One or more secrets, each passing `valid`: several are accepted while one is being rotated (so none holds a comma). */
const secretList = (valid: (secret: string) => boolean, each: string) =>
  commaList().refine((list) => list.length > 0 && list.every(valid), {
    error: `must be one or more comma-separated secrets, each ${each}`,
  });

const origins = commaList()
  .transform((list) => list.map(originOf))
  .refine((list) => list.every((origin) => origin !== undefined), {
    error: 'must be a comma-separated list of origins such as https://shop.example.com (scheme, host and optional port, no path)',
  })
  .transform((list) => list as readonly string[]);

/** A lower-cased comma-separated list, refused unless `valid`. */
const wordList = (valid: (words: string[]) => boolean, error: string) => commaList(true).refine(valid, { error });

const lifecycleEvents = wordList(
  (list) => list.every((word) => (LIFECYCLE_EVENT_SETTINGS as readonly string[]).includes(word)),
  `must be a comma-separated list of ${LIFECYCLE_EVENT_SETTINGS.join(', ')} (or empty)`,
).transform((list) => [...new Set(list)] as LifecycleEventSetting[]);

const paymentMethods = wordList(
  (list) =>
    list.join() === 'automatic' || (list.length > 0 && list.every((type) => type !== 'automatic' && /^[a-z][a-z0-9_]{0,49}$/.test(type))),
  'must be "automatic" or a comma-separated list of payment method types such as card or card,link',
).transform((list): 'automatic' | string[] => (list[0] === 'automatic' ? 'automatic' : [...new Set(list)]));

const reservedSlots = wordList(
  (list) => list.every((entry) => /^(checkout|webhook):\d{1,4}$/.test(entry)),
  'must be checkout:<slots>,webhook:<slots> (either may be left out)',
).transform((list) => Object.fromEntries(list.map((entry) => entry.split(':')).map(([caller, n]) => [caller, Number(n)])) as Partial<SlotSplit['reserved']>);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test'], { error: 'must be development, production or test' }).default('development'),
  WOOCOMMERCE_URL: optional(baseUrl),
  WOOCOMMERCE_SITE_URL: optional(httpUrl(SITE_URL_EXPECTED).refine((v) => !/[?#@]/.test(v.replace(/^\w+:\/\//, '')), { error: SITE_URL_EXPECTED })),
  WOOCOMMERCE_CONSUMER_KEY: optional(prefixed(['ck_'])),
  WOOCOMMERCE_CONSUMER_SECRET: optional(prefixed(['cs_'])),
  STRIPE_SECRET_KEY: optional(prefixed(['sk_', 'rk_'])),
  STRIPE_WEBHOOK_SECRET: optional(secretList((s) => s.startsWith('whsec_'), 'starting with "whsec_"')),
  STRIPE_API_BASE_URL: optional(baseUrl),
  CHECKOUT_TOKEN_SECRET: optional(tokenSecret),
  CHECKOUT_TOKEN_SECRET_PREVIOUS: optional(tokenSecret),
  CHECKOUT_TOKEN_ISSUER: optional(z.string()),
  CHECKOUT_TOKEN_AUDIENCE: optional(z.string()),
  ALLOWED_ORIGINS: defaulted(origins, []),
  TRUST_PROXY_HOPS: defaulted(wholeNumber(10, 'must be a whole number from 1 to 10'), 1),
  CLIENT_IP_HEADER: defaulted(z.string().trim().toLowerCase().regex(/^[a-z0-9-]{1,100}$/), 'x-forwarded-for'),
  SHIPPING_WEBHOOK_SECRET: optional(secretList((s) => s.length >= 16, 'at least 16 characters long')),
  SHIPPING_WEBHOOK_AUTH: optional(z.enum(['off'])),
  SHIPSTATION_API_KEY: optional(z.string()),
  SHIPSTATION_API_SECRET: optional(z.string()),
  SHIPSTATION_API_BASE_URL: defaulted(baseUrl, 'https://ssapi.shipstation.com'),
  SHIPSTATION_V2_API_KEY: optional(z.string()),
  SHIPSTATION_V2_API_BASE_URL: defaulted(baseUrl, 'https://api.shipstation.com'),
  SHIPSTATION_V2_JWKS_URL: defaulted(baseUrl, 'https://api.shipengine.com/jwks'),
  SHIPPING_DELIVERED_COMPLETES: defaulted(onOff, 'on'),
  REDIS_URL: optional(z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })),
  REDIS_TIMEOUT_MS: defaulted(wholeNumber(10_000), 500),
  REDIS_KEY_PREFIX: defaulted(z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/), 'checkout:'),
  UPSTREAM_TIMEOUT_MS: defaulted(
    wholeNumber(120_000, 'must be a whole number of milliseconds from 1 to 120000'),
    UPSTREAM_TIMEOUT_DEFAULT_MS,
  ),
  STORE_MAX_CONCURRENCY: optional(wholeNumber(1000, 'must be a whole number of concurrent store calls from 1 to 1000')),
  STORE_RESERVED_SLOTS: optional(reservedSlots),
  CRON_SECRET: optional(atLeast(16)),
  SERVICE_URL: optional(baseUrl),
  VERCEL_ENV: optional(z.string()),
  VERCEL_PROJECT_PRODUCTION_URL: optional(z.string()),
  RECONCILE_WINDOW_HOURS: defaulted(hours(720, ' (the card provider keeps events for 30 days)'), 72),
  SHIPMENT_RECONCILE_WINDOW_HOURS: defaulted(hours(720), 72),
  CARD_LIFECYCLE_EVENTS: defaulted(lifecycleEvents, []),
  STRIPE_PAYMENT_METHODS: defaulted(paymentMethods, ['card']),
  STRIPE_CAPTURE: defaulted(choice(['automatic', 'on_shipment', 'manual']), 'automatic'),
  AUTHORIZATION_EXPIRY_ACTION: defaulted(choice(['report', 'capture']), 'report'),
  // Card authorizations lapse after 168 hours: the cron must act before.
  AUTHORIZATION_EXPIRY_HOURS: defaulted(hours(167, ' (authorizations lapse after 168)'), 144),
  SHIPMENT_TRACKING_META: defaulted(onOff, 'off'),
  CUSTOMER_MESSAGES: defaulted(choice(['customer_note', 'order_notes']), 'customer_note'),
  STORE_CALLBACK_SECRET: optional(atLeast(32)),
  CARD_PAYMENT_METHOD_ID: defaulted(atMost(100), 'cardprovider'),
  CARD_PAYMENT_METHOD_TITLE: defaulted(atMost(200), 'Credit Card (cardprovider)'),
  MANUAL_PAYMENT_METHOD_TITLE: defaulted(atMost(200), 'Manual Payment (Zelle / Venmo)'),
});

export type Config = ReturnType<typeof parseConfig>;
type CardPart = NonNullable<Config['card']>;
/** The card part, its choices optional (a client built for one call leaves them out). */
export type CardSettings = Omit<CardPart, 'paymentMethods' | 'capture'> & Partial<Pick<CardPart, 'paymentMethods' | 'capture'>>;
export type StoreSettings = NonNullable<Config['store']>;

/** The values .env.example ships where a shop's own belong: a copy not filled in must never make the service call them. */
export const EXAMPLE_PLACEHOLDERS: Readonly<Record<string, string>> = {
  WOOCOMMERCE_URL: 'https://shop.example.com',
  ALLOWED_ORIGINS: 'https://shop.example.com,https://www.shop.example.com',
};

export function placeholderVariables(source: Record<string, string | undefined>): string[] {
  return Object.keys(EXAMPLE_PLACEHOLDERS).filter((name) => source[name]?.trim() === EXAMPLE_PLACEHOLDERS[name]);
}

/** Names them: a list of names, or the names already written out (with where each is set). */
export const placeholderMessage = (names: readonly string[] | string) =>
  `these variables still hold the example's placeholders: ${typeof names === 'string' ? names : names.join(', ')}`;

/** A Config, or one ConfigError naming every missing and every malformed variable together, never a value. */
export function parseConfig(source: Record<string, string | undefined>) {
  // zod's own texts ("expected number, received NaN") mean nothing to an operator.
  const result = envSchema.safeParse(source, { error: () => 'is malformed' });
  const problems: string[] = [];
  const isProduction = source.NODE_ENV === 'production';
  // Unset or empty in the raw environment (an empty `FOO=` counts as unset).
  const unset = (name: string) => (source[name] ?? '').trim() === '';
  const missing = [...REQUIRED_VARIABLES.store, ...REQUIRED_VARIABLES.card, ...REQUIRED_VARIABLES.token].filter(unset);
  if (isProduction && missing.length > 0) problems.push(`missing ${missing.join(', ')} (required when NODE_ENV=production)`);
  // Unauthenticated, anyone could mark paid orders shipped (docs/decisions.md#d11): production needs the secret or an explicit opt-out.
  if (isProduction && unset('SHIPPING_WEBHOOK_SECRET') && source.SHIPPING_WEBHOOK_AUTH?.trim() !== 'off') {
    problems.push(
      'missing SHIPPING_WEBHOOK_SECRET (required when NODE_ENV=production; set SHIPPING_WEBHOOK_AUTH=off to accept unauthenticated shipping notifications)',
    );
  }
  const placeholders = placeholderVariables(source);
  if (isProduction && placeholders.length > 0) problems.push(`${placeholderMessage(placeholders)} (set your shop's own values)`);
  // The first message of each malformed variable, named.
  const malformed = result.success ? {} : z.flattenError(result.error).fieldErrors;
  problems.push(...Object.entries(malformed).map(([name, messages]) => `${name} ${messages?.[0]}`));
  // Undefined: no cap. A split must leave a slot unreserved, for the crons and first-come callers.
  const limit = result.success ? result.data.STORE_MAX_CONCURRENCY : undefined;
  const storeConcurrency: SlotSplit | undefined =
    limit === undefined ? undefined : { limit, reserved: { ...defaultReserve(limit), ...result.data?.STORE_RESERVED_SLOTS } };
  if (storeConcurrency && storeConcurrency.reserved.checkout + storeConcurrency.reserved.webhook >= storeConcurrency.limit) {
    problems.push(
      `STORE_RESERVED_SLOTS must leave at least one of the ${limit} slots of STORE_MAX_CONCURRENCY unreserved (for the crons and first-come callers)`,
    );
  }
  if (problems.length > 0 || !result.success) {
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const env = result.data;
  // Vercel's production domain (no scheme), only in a production deployment: a preview has no webhook of its own.
  const vercelDomain = env.VERCEL_ENV === 'production' ? env.VERCEL_PROJECT_PRODUCTION_URL : undefined;
  const vercelUrl = vercelDomain && /^[a-z0-9.-]+(:\d+)?$/i.test(vercelDomain) ? `https://${vercelDomain.toLowerCase()}` : undefined;

  const warnings: [when: unknown, warning: string][] = [
    [env.STORE_RESERVED_SLOTS && !storeConcurrency, 'STORE_RESERVED_SLOTS is set without STORE_MAX_CONCURRENCY: there is no cap to split, so it has no effect'],
    [isProduction && env.WOOCOMMERCE_URL?.startsWith('http://'), 'WOOCOMMERCE_URL uses http://: requests are signed with OAuth 1.0a but travel unencrypted'],
    [isProduction && env.STRIPE_API_BASE_URL?.startsWith('http://'), 'STRIPE_API_BASE_URL uses http://: card-provider calls travel unencrypted'],
    [
      isProduction && !env.SHIPPING_WEBHOOK_SECRET,
      'SHIPPING_WEBHOOK_SECRET is not set and SHIPPING_WEBHOOK_AUTH=off: anyone who knows the URL can mark paid orders shipped and write into the customer note',
    ],
    [isProduction && env.ALLOWED_ORIGINS.length === 0, 'ALLOWED_ORIGINS is empty: every checkout request will be refused as coming from an invalid origin'],
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
  ];

  return {
    env: env.NODE_ENV,
    isProduction,
    isDevelopment: env.NODE_ENV === 'development',
    store:
      env.WOOCOMMERCE_URL && env.WOOCOMMERCE_CONSUMER_KEY && env.WOOCOMMERCE_CONSUMER_SECRET
        ? {
            url: env.WOOCOMMERCE_URL,
            ...(env.WOOCOMMERCE_SITE_URL ? { siteUrl: env.WOOCOMMERCE_SITE_URL } : {}),
            consumerKey: env.WOOCOMMERCE_CONSUMER_KEY,
            consumerSecret: env.WOOCOMMERCE_CONSUMER_SECRET,
          }
        : undefined,
    card: env.STRIPE_SECRET_KEY
      ? {
          secretKey: env.STRIPE_SECRET_KEY,
          webhookSecrets: (env.STRIPE_WEBHOOK_SECRET ?? []) as readonly string[],
          apiBaseUrl: env.STRIPE_API_BASE_URL,
          paymentMethods: env.STRIPE_PAYMENT_METHODS,
          capture: env.STRIPE_CAPTURE,
        }
      : undefined,
    token: env.CHECKOUT_TOKEN_SECRET
      ? {
          secret: env.CHECKOUT_TOKEN_SECRET,
          // Still verifies, never signs.
          previousSecret: env.CHECKOUT_TOKEN_SECRET_PREVIOUS,
          issuer: env.CHECKOUT_TOKEN_ISSUER,
          audience: env.CHECKOUT_TOKEN_AUDIENCE,
        }
      : undefined,
    allowedOrigins: env.ALLOWED_ORIGINS,
    trustProxyHops: env.TRUST_PROXY_HOPS,
    clientIpHeader: env.CLIENT_IP_HEADER,
    shipping: {
      webhookSecrets: (env.SHIPPING_WEBHOOK_SECRET ?? []) as readonly string[],
      unauthenticatedAllowed: env.SHIPPING_WEBHOOK_AUTH === 'off',
      apiKey: env.SHIPSTATION_API_KEY,
      apiSecret: env.SHIPSTATION_API_SECRET,
      apiBaseUrl: env.SHIPSTATION_API_BASE_URL,
    },
    shippingV2: {
      apiKey: env.SHIPSTATION_V2_API_KEY,
      apiBaseUrl: env.SHIPSTATION_V2_API_BASE_URL,
      jwksUrl: env.SHIPSTATION_V2_JWKS_URL,
      deliveredCompletes: env.SHIPPING_DELIVERED_COMPLETES === 'on',
    },
    redisUrl: env.REDIS_URL,
    redisTimeoutMs: env.REDIS_TIMEOUT_MS,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
    storeConcurrency,
    cronSecret: env.CRON_SECRET,
    serviceUrl: env.SERVICE_URL ?? vercelUrl,
    reconcileWindowHours: env.RECONCILE_WINDOW_HOURS,
    shipmentReconcileWindowHours: env.SHIPMENT_RECONCILE_WINDOW_HOURS,
    paymentMethods: {
      cardId: env.CARD_PAYMENT_METHOD_ID,
      cardTitle: env.CARD_PAYMENT_METHOD_TITLE,
      manualTitle: env.MANUAL_PAYMENT_METHOD_TITLE,
    },
    capture: env.STRIPE_CAPTURE,
    authorizationExpiry: { action: env.AUTHORIZATION_EXPIRY_ACTION, ageHours: env.AUTHORIZATION_EXPIRY_HOURS },
    shipmentTrackingMeta: env.SHIPMENT_TRACKING_META === 'on',
    customerMessages: env.CUSTOMER_MESSAGES,
    storeCallbackSecret: env.STORE_CALLBACK_SECRET,
    lifecycleEvents: new Set(env.CARD_LIFECYCLE_EVENTS) as ReadonlySet<LifecycleEventSetting>,
    // Names only, never values, like the warnings.
    missing: missing as readonly string[],
    placeholders: placeholders as readonly string[],
    warnings: warnings.filter(([when]) => when).map(([, warning]) => warning) as readonly string[],
  };
}

let cached: Config | undefined;
/** The process's configuration, parsed on first use (at start: lib/startup.ts); an invalid one is read again each time. */
export function getConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** Undefined while the configuration is invalid: the HTTP layer then answers with its defaults, and getConfig() says why. */
export function configIfValid(): Config | undefined {
  try {
    return getConfig();
  } catch {
    return undefined;
  }
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
