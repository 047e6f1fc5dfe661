import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, requireSetting } from '@/lib/config';
import { ServiceNotConfiguredError } from '@/lib/errors';

const complete = {
  NODE_ENV: 'production',
  WOOCOMMERCE_URL: 'https://shop.example.com/',
  WOOCOMMERCE_CONSUMER_KEY: 'ck_live_abc',
  WOOCOMMERCE_CONSUMER_SECRET: 'cs_live_secretvalue',
  STRIPE_SECRET_KEY: 'sk_live_supersecret',
  STRIPE_WEBHOOK_SECRET: 'whsec_supersecret',
  CHECKOUT_TOKEN_SECRET: 'a-very-long-checkout-token-secret-value!',
  ALLOWED_ORIGINS: 'https://shop.example.com, https://www.shop.example.com',
  SHIPPING_WEBHOOK_SECRET: 'shipping-secret-0123456789',
  REDIS_URL: 'rediss://default:redis-password@shared.example.com:6379',
};

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('parses a complete production configuration with defaults', () => {
    const config = parseConfig(complete);
    expect(config.isProduction).toBe(true);
    expect(config.store).toEqual({ url: 'https://shop.example.com', consumerKey: 'ck_live_abc', consumerSecret: 'cs_live_secretvalue' });
    expect(config.allowedOrigins).toEqual(['https://shop.example.com', 'https://www.shop.example.com']);
    expect(config.trustProxyHops).toBe(1);
    expect(config.upstreamTimeoutMs).toBe(10_000);
    expect(config.shipping.apiBaseUrl).toBe('https://ssapi.shipstation.com');
    expect(config.paymentMethods).toEqual({
      cardId: 'cardprovider',
      cardTitle: 'Credit Card (cardprovider)',
      manualTitle: 'Manual Payment (Zelle / Venmo)',
    });
    expect(config.warnings).toEqual([]);
  });

  it('refuses to start in production without store, card and token settings, naming each variable', () => {
    const error = errorOf(() => parseConfig({ NODE_ENV: 'production' }));
    for (const name of [
      'WOOCOMMERCE_URL',
      'WOOCOMMERCE_CONSUMER_KEY',
      'WOOCOMMERCE_CONSUMER_SECRET',
      'STRIPE_SECRET_KEY',
      'STRIPE_WEBHOOK_SECRET',
      'CHECKOUT_TOKEN_SECRET',
    ]) {
      expect(error.message).toContain(name);
    }
  });

  it('names every malformed variable in one message and never prints a value', () => {
    const error = errorOf(() =>
      parseConfig({
        ...complete,
        WOOCOMMERCE_CONSUMER_KEY: 'key-without-prefix-SECRETVALUE',
        STRIPE_SECRET_KEY: 'pk_live_SECRETVALUE',
        CHECKOUT_TOKEN_SECRET: 'short-SECRETVALUE',
        UPSTREAM_TIMEOUT_MS: 'soon',
      }),
    );
    expect(error.message).toContain('WOOCOMMERCE_CONSUMER_KEY');
    expect(error.message).toContain('STRIPE_SECRET_KEY');
    expect(error.message).toContain('CHECKOUT_TOKEN_SECRET');
    expect(error.message).toContain('UPSTREAM_TIMEOUT_MS');
    expect(error.message).not.toContain('SECRETVALUE');
  });

  it('refuses origins that are not bare origins', () => {
    expect(errorOf(() => parseConfig({ ...complete, ALLOWED_ORIGINS: 'https://shop.example.com/checkout' })).message).toContain('ALLOWED_ORIGINS');
    expect(errorOf(() => parseConfig({ ...complete, ALLOWED_ORIGINS: 'shop.example.com' })).message).toContain('ALLOWED_ORIGINS');
  });

  it('accepts http:// bases with a warning in production, and warns about an unset shipping secret', () => {
    const config = parseConfig({ ...complete, WOOCOMMERCE_URL: 'http://10.0.0.5:8080', SHIPPING_WEBHOOK_SECRET: '' });
    expect(config.store?.url).toBe('http://10.0.0.5:8080');
    expect(config.warnings.join('\n')).toContain('WOOCOMMERCE_URL uses http://');
    expect(config.warnings.join('\n')).toContain('SHIPPING_WEBHOOK_SECRET is not set');
  });

  it('lets development run with parts missing and fails only what needs them', () => {
    const config = parseConfig({ NODE_ENV: 'development' });
    expect(config.missing).toContain('WOOCOMMERCE_URL');
    expect(() => requireSetting(config, 'store')).toThrow(ServiceNotConfiguredError);
    expect(() => requireSetting(config, 'token')).toThrow(/CHECKOUT_TOKEN_SECRET/);
  });

  it('treats empty variables as unset', () => {
    const config = parseConfig({ NODE_ENV: 'test', STRIPE_API_BASE_URL: '', TRUST_PROXY_HOPS: '' });
    expect(config.card).toBeUndefined();
    expect(config.trustProxyHops).toBe(1);
  });
});
