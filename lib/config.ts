/**
 * Service configuration (DECISIONS 2): `process.env` parsed once with zod.
 *
 * A bad configuration is reported in one message that names every missing or
 * malformed variable and never prints a value. In production the service
 * refuses to start without the store, card-provider and token settings; in
 * development and tests those parts may be missing, and whatever needs them
 * fails with a clear "not configured" error instead.
 */
import { z } from 'zod';
import { ServiceNotConfiguredError } from '@/lib/errors';

/** An empty variable (`FOO=` in a .env file) counts as unset. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .transform((v) => v.replace(/\/+$/, ''));

const prefixed = (prefixes: string[]) =>
  z.string().refine((v) => prefixes.some((p) => v.startsWith(p)), {
    message: `must start with ${prefixes.map((p) => `"${p}"`).join(' or ')}`,
  });

const positiveInt = z.coerce.number().int().positive();

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),

  WOOCOMMERCE_URL: optional(baseUrl),
  WOOCOMMERCE_CONSUMER_KEY: optional(prefixed(['ck_'])),
  WOOCOMMERCE_CONSUMER_SECRET: optional(prefixed(['cs_'])),

  STRIPE_SECRET_KEY: optional(prefixed(['sk_', 'rk_'])),
  STRIPE_WEBHOOK_SECRET: optional(prefixed(['whsec_'])),
  STRIPE_API_BASE_URL: optional(baseUrl),

  CHECKOUT_TOKEN_SECRET: optional(
    z.string().refine((v) => Buffer.byteLength(v, 'utf8') >= 32, { message: 'must be at least 32 bytes long' }),
  ),
  CHECKOUT_TOKEN_ISSUER: optional(z.string()),
  CHECKOUT_TOKEN_AUDIENCE: optional(z.string()),

  ALLOWED_ORIGINS: optional(z.string()),
  TRUST_PROXY_HOPS: optional(z.coerce.number().int().min(1).max(10)).transform((v) => v ?? 1),

  SHIPPING_WEBHOOK_SECRET: optional(z.string().min(16, 'must be at least 16 characters long')),
  SHIPSTATION_API_KEY: optional(z.string()),
  SHIPSTATION_API_SECRET: optional(z.string()),
  SHIPSTATION_API_BASE_URL: optional(baseUrl).transform((v) => v ?? 'https://ssapi.shipstation.com'),

  REDIS_URL: optional(z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })),
  // Short: every request waits at most this long on Redis before falling back or failing (README, Shared state).
  REDIS_TIMEOUT_MS: optional(positiveInt.max(10_000)).transform((v) => v ?? 500),
  // Lets one Redis serve several shops or environments (staging beside production).
  REDIS_KEY_PREFIX: optional(
    z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'must be 1 to 64 letters, digits or : _ . -'),
  ).transform((v) => v ?? 'checkout:'),
  UPSTREAM_TIMEOUT_MS: optional(positiveInt.max(120_000)).transform((v) => v ?? 10_000),

  CARD_PAYMENT_METHOD_ID: optional(z.string().max(100)).transform((v) => v ?? 'cardprovider'),
  CARD_PAYMENT_METHOD_TITLE: optional(z.string().max(200)).transform((v) => v ?? 'Credit Card (cardprovider)'),
  MANUAL_PAYMENT_METHOD_TITLE: optional(z.string().max(200)).transform(
    (v) => v ?? 'Manual Payment (Zelle / Venmo)',
  ),
});

type Env = z.infer<typeof envSchema>;

export interface StoreSettings {
  url: string;
  consumerKey: string;
  consumerSecret: string;
}

export interface CardSettings {
  secretKey: string;
  webhookSecret: string | undefined;
  apiBaseUrl: string | undefined;
}

export interface TokenSettings {
  secret: string;
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
  shipping: {
    webhookSecret: string | undefined;
    apiKey: string | undefined;
    apiSecret: string | undefined;
    apiBaseUrl: string;
  };
  /** Shared state across instances (lib/redis/); undefined keeps it in process memory. */
  redisUrl: string | undefined;
  /** Connect and command timeout of the Redis client. */
  redisTimeoutMs: number;
  /** Every key this service writes to Redis starts with it. */
  redisKeyPrefix: string;
  upstreamTimeoutMs: number;
  paymentMethods: {
    cardId: string;
    cardTitle: string;
    manualTitle: string;
  };
  /** Names of the variables that were expected but not set (never their values). */
  missing: readonly string[];
  /** Human-readable warnings to log at start (names and facts only, never values). */
  warnings: readonly string[];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const STORE_VARS = ['WOOCOMMERCE_URL', 'WOOCOMMERCE_CONSUMER_KEY', 'WOOCOMMERCE_CONSUMER_SECRET'] as const;
const CARD_VARS = ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const;
const TOKEN_VARS = ['CHECKOUT_TOKEN_SECRET'] as const;

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

/** Parses an environment into a Config, or throws one ConfigError naming every bad variable. */
export function parseConfig(source: Record<string, string | undefined>): Config {
  const result = envSchema.safeParse(source);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'} ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const env = result.data;
  const { origins, invalid: originsInvalid } = parseOrigins(env.ALLOWED_ORIGINS);
  if (originsInvalid) {
    throw new ConfigError(
      'Invalid configuration: ALLOWED_ORIGINS must be a comma-separated list of origins such as https://shop.example.com (scheme, host and optional port, no path)',
    );
  }

  const isProduction = env.NODE_ENV === 'production';
  const unset = (names: readonly (keyof Env)[]) => names.filter((n) => env[n] === undefined);
  const missing = [...unset(STORE_VARS), ...unset(CARD_VARS), ...unset(TOKEN_VARS)];
  if (isProduction && missing.length > 0) {
    throw new ConfigError(`Invalid configuration: missing ${missing.join(', ')} (required when NODE_ENV=production)`);
  }

  const warnings: string[] = [];
  if (isProduction) {
    if (env.WOOCOMMERCE_URL?.startsWith('http://')) {
      warnings.push('WOOCOMMERCE_URL uses http://: requests are signed with OAuth 1.0a but travel unencrypted');
    }
    if (env.STRIPE_API_BASE_URL?.startsWith('http://')) {
      warnings.push('STRIPE_API_BASE_URL uses http://: card-provider calls travel unencrypted');
    }
    if (!env.SHIPPING_WEBHOOK_SECRET) {
      warnings.push('SHIPPING_WEBHOOK_SECRET is not set: anyone who knows the URL can post shipping notifications');
    }
    if (origins.length === 0) {
      warnings.push('ALLOWED_ORIGINS is empty: every checkout request will be refused as coming from an invalid origin');
    }
  }
  if (isProduction && !env.REDIS_URL) {
    warnings.push(
      'REDIS_URL is not set: rate limits, order locks and processed events are kept per instance; set it when more than one instance runs (every serverless deployment)',
    );
  }
  if (Boolean(env.SHIPSTATION_API_KEY) !== Boolean(env.SHIPSTATION_API_SECRET)) {
    warnings.push('only one of SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET is set: resource_url deliveries will be ignored');
  }

  const store =
    env.WOOCOMMERCE_URL && env.WOOCOMMERCE_CONSUMER_KEY && env.WOOCOMMERCE_CONSUMER_SECRET
      ? {
          url: env.WOOCOMMERCE_URL,
          consumerKey: env.WOOCOMMERCE_CONSUMER_KEY,
          consumerSecret: env.WOOCOMMERCE_CONSUMER_SECRET,
        }
      : undefined;
  const card = env.STRIPE_SECRET_KEY
    ? { secretKey: env.STRIPE_SECRET_KEY, webhookSecret: env.STRIPE_WEBHOOK_SECRET, apiBaseUrl: env.STRIPE_API_BASE_URL }
    : undefined;
  const token = env.CHECKOUT_TOKEN_SECRET
    ? { secret: env.CHECKOUT_TOKEN_SECRET, issuer: env.CHECKOUT_TOKEN_ISSUER, audience: env.CHECKOUT_TOKEN_AUDIENCE }
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
    shipping: {
      webhookSecret: env.SHIPPING_WEBHOOK_SECRET,
      apiKey: env.SHIPSTATION_API_KEY,
      apiSecret: env.SHIPSTATION_API_SECRET,
      apiBaseUrl: env.SHIPSTATION_API_BASE_URL,
    },
    redisUrl: env.REDIS_URL,
    redisTimeoutMs: env.REDIS_TIMEOUT_MS,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
    paymentMethods: {
      cardId: env.CARD_PAYMENT_METHOD_ID,
      cardTitle: env.CARD_PAYMENT_METHOD_TITLE,
      manualTitle: env.MANUAL_PAYMENT_METHOD_TITLE,
    },
    missing,
    warnings,
  };
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
