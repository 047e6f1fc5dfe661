/**
 * A production configuration with every setting the service wants there, so a
 * test of one setting starts from "nothing to warn about". Every value is a
 * test value.
 */
export const COMPLETE_PRODUCTION_ENV = {
  NODE_ENV: 'production',
  WOOCOMMERCE_URL: 'https://shop.example.com/',
  WOOCOMMERCE_CONSUMER_KEY: 'ck_live_abc',
  WOOCOMMERCE_CONSUMER_SECRET: 'cs_live_secretvalue',
  STRIPE_SECRET_KEY: 'sk_live_supersecret',
  STRIPE_WEBHOOK_SECRET: 'whsec_supersecret',
  CHECKOUT_TOKEN_SECRET: 'a-very-long-checkout-token-secret-value!',
  ALLOWED_ORIGINS: 'https://shop.example.com, https://www.shop.example.com',
  SHIPPING_WEBHOOK_SECRET: 'shipping-secret-0123456789',
  CRON_SECRET: 'cron-secret-0123456789abcdef',
  REDIS_URL: 'rediss://default:redis-password@shared.example.com:6379',
};
