/** The configuration route tests run with; every value is a test value. */
import { resetServices } from '@/lib/services';

export const TEST_STORE_URL = 'https://shop.test';
export const TEST_STOREFRONT_ORIGIN = 'https://storefront.test';
export const TEST_TOKEN_SECRET = 'test-checkout-token-secret-0123456789abcdef';
export const TEST_WEBHOOK_SECRET = 'whsec_test_secret_0123456789';
export const TEST_CONSUMER_KEY = 'ck_test_key';
export const TEST_CONSUMER_SECRET = 'cs_test_secret';
export const TEST_STRIPE_KEY = 'sk_test_key_0123456789';
export const TEST_CRON_SECRET = 'test-cron-secret-0123456789abcdef';

const BASE_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  WOOCOMMERCE_URL: TEST_STORE_URL,
  WOOCOMMERCE_CONSUMER_KEY: TEST_CONSUMER_KEY,
  WOOCOMMERCE_CONSUMER_SECRET: TEST_CONSUMER_SECRET,
  STRIPE_SECRET_KEY: TEST_STRIPE_KEY,
  STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
  CHECKOUT_TOKEN_SECRET: TEST_TOKEN_SECRET,
  ALLOWED_ORIGINS: `${TEST_STOREFRONT_ORIGIN},http://localhost:3001`,
  TRUST_PROXY_HOPS: '1',
  UPSTREAM_TIMEOUT_MS: '2000',
};

const MANAGED = [
  ...Object.keys(BASE_ENV),
  'WOOCOMMERCE_SITE_URL',
  'STRIPE_API_BASE_URL',
  'CHECKOUT_TOKEN_ISSUER',
  'CHECKOUT_TOKEN_AUDIENCE',
  'SHIPPING_WEBHOOK_SECRET',
  'SHIPSTATION_API_KEY',
  'SHIPSTATION_API_SECRET',
  'SHIPSTATION_API_BASE_URL',
  'SHIPSTATION_V2_API_KEY',
  'SHIPSTATION_V2_API_BASE_URL',
  'SHIPSTATION_V2_JWKS_URL',
  'SHIPPING_DELIVERED_COMPLETES',
  'REDIS_URL',
  'REDIS_TIMEOUT_MS',
  'REDIS_KEY_PREFIX',
  'CARD_LIFECYCLE_EVENTS',
  'STRIPE_PAYMENT_METHODS',
  'CARD_PAYMENT_METHOD_ID',
  'CARD_PAYMENT_METHOD_TITLE',
  'MANUAL_PAYMENT_METHOD_TITLE',
  'CRON_SECRET',
  'CHECKOUT_TOKEN_SECRET_PREVIOUS',
  'RECONCILE_WINDOW_HOURS',
  'SHIPMENT_RECONCILE_WINDOW_HOURS',
  'CLIENT_IP_HEADER',
  'SHIPPING_WEBHOOK_AUTH',
  'STRIPE_CAPTURE',
  'STORE_CALLBACK_SECRET',
  'AUTHORIZATION_EXPIRY_ACTION',
  'AUTHORIZATION_EXPIRY_HOURS',
  'SHIPMENT_TRACKING_META',
  'CUSTOMER_MESSAGES',
  'STORE_MAX_CONCURRENCY',
  'STORE_RESERVED_SLOTS',
  'SERVICE_URL',
  'VERCEL_ENV',
  'VERCEL_PROJECT_PRODUCTION_URL',
];

/** Sets the test configuration (plus overrides; `undefined` unsets) and drops all service state. */
export function useTestEnv(overrides: Record<string, string | undefined> = {}): void {
  const env = process.env as Record<string, string | undefined>;
  for (const name of MANAGED) delete env[name];
  for (const [name, value] of Object.entries({ ...BASE_ENV, ...overrides })) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  resetServices();
}
