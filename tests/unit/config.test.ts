import { describe, expect, it } from 'vitest';
import { parseConfig, requireSetting } from '@/lib/config';
import { COMPLETE_PRODUCTION_ENV } from '../support/production-env';
import { ConfigError, ServiceNotConfiguredError } from '@/lib/errors';

const complete = COMPLETE_PRODUCTION_ENV;

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
    expect(config.reconcileWindowHours).toBe(72);
    expect(config.cronSecret).toBe('cron-secret-0123456789abcdef');
    expect(config.token?.previousSecret).toBeUndefined();
    expect(config.warnings.filter((w) => !w.startsWith('REDIS_URL'))).toEqual([]);
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

  it('names every missing and malformed variable in one start, the shipping secret and the slot split among them', () => {
    const rest = { ...complete, SHIPPING_WEBHOOK_SECRET: '', STRIPE_SECRET_KEY: '', CHECKOUT_TOKEN_SECRET: '' };
    const error = errorOf(() =>
      parseConfig({ ...rest, UPSTREAM_TIMEOUT_MS: 'soon-SECRETVALUE', STORE_MAX_CONCURRENCY: '4', STORE_RESERVED_SLOTS: 'checkout:3,webhook:1' }),
    );
    for (const name of ['STRIPE_SECRET_KEY', 'CHECKOUT_TOKEN_SECRET', 'SHIPPING_WEBHOOK_SECRET', 'UPSTREAM_TIMEOUT_MS']) {
      expect(error.message).toContain(name);
    }
    expect(error.message).toMatch(/SHIPPING_WEBHOOK_AUTH=off/);
    expect(error.message).not.toContain('SECRETVALUE');
    // With every other variable right, the slot split is named too, in the same message as the shipping secret.
    const split = errorOf(() =>
      parseConfig({ ...complete, SHIPPING_WEBHOOK_SECRET: '', STORE_MAX_CONCURRENCY: '4', STORE_RESERVED_SLOTS: 'checkout:3,webhook:1' }),
    );
    expect(split.message).toMatch(/SHIPPING_WEBHOOK_SECRET.*STORE_RESERVED_SLOTS must leave at least one/);
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

  it('names missing and malformed variables together, in its own words, without a value', () => {
    const { WOOCOMMERCE_URL: _url, STRIPE_SECRET_KEY: _key, ...rest } = complete;
    const error = errorOf(() =>
      parseConfig({
        ...rest,
        UPSTREAM_TIMEOUT_MS: 'soon-SECRETVALUE',
        TRUST_PROXY_HOPS: '0',
        RECONCILE_WINDOW_HOURS: 'lots',
        STRIPE_WEBHOOK_SECRET: 'whsec_good,SECRETVALUE',
        ALLOWED_ORIGINS: 'https://shop.example.com/path',
      }),
    );
    expect(error.message).toMatch(/missing WOOCOMMERCE_URL, STRIPE_SECRET_KEY \(required when NODE_ENV=production\)/);
    expect(error.message).toContain('UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds from 1 to 120000');
    expect(error.message).toContain('TRUST_PROXY_HOPS must be a whole number from 1 to 10');
    expect(error.message).toContain('RECONCILE_WINDOW_HOURS must be a whole number of hours');
    expect(error.message).toContain('STRIPE_WEBHOOK_SECRET must be one or more comma-separated secrets');
    expect(error.message).toContain('ALLOWED_ORIGINS');
    // No validator jargon, no value.
    expect(error.message).not.toMatch(/expected|received|NaN|Too small|Invalid input/i);
    expect(error.message).not.toContain('SECRETVALUE');
  });

  it('accepts several webhook signing secrets and a previous token secret for rotations', () => {
    const config = parseConfig({
      ...complete,
      STRIPE_WEBHOOK_SECRET: 'whsec_new, whsec_old',
      CHECKOUT_TOKEN_SECRET_PREVIOUS: 'the-previous-checkout-token-secret-0123456789',
      RECONCILE_WINDOW_HOURS: '24',
    });
    expect(config.card?.webhookSecrets).toEqual(['whsec_new', 'whsec_old']);
    expect(config.token?.previousSecret).toBe('the-previous-checkout-token-secret-0123456789');
    expect(config.reconcileWindowHours).toBe(24);
    expect(errorOf(() => parseConfig({ ...complete, CHECKOUT_TOKEN_SECRET_PREVIOUS: 'short' })).message).toContain(
      'CHECKOUT_TOKEN_SECRET_PREVIOUS must be at least 32 bytes long',
    );
    expect(errorOf(() => parseConfig({ ...complete, CRON_SECRET: 'short' })).message).toContain(
      'CRON_SECRET must be at least 16 characters long',
    );
  });

  it('warns in production when the cron secret or Redis is missing (replay queue not durable)', () => {
    const { CRON_SECRET: _c, REDIS_URL: _r, ...rest } = complete;
    const warnings = parseConfig(rest).warnings.join('\n');
    expect(warnings).toContain('CRON_SECRET is not set');
    expect(warnings).toMatch(/REDIS_URL is not set: .*per instance.*the shipping replay queue.*not durable/);
  });

  it('refuses origins that are not bare origins', () => {
    expect(errorOf(() => parseConfig({ ...complete, ALLOWED_ORIGINS: 'https://shop.example.com/checkout' })).message).toContain('ALLOWED_ORIGINS');
    expect(errorOf(() => parseConfig({ ...complete, ALLOWED_ORIGINS: 'shop.example.com' })).message).toContain('ALLOWED_ORIGINS');
  });

  it('accepts http:// bases with a warning in production, and warns about an unset shipping secret', () => {
    const config = parseConfig({ ...complete, WOOCOMMERCE_URL: 'http://10.0.0.5:8080', SHIPPING_WEBHOOK_SECRET: '', SHIPPING_WEBHOOK_AUTH: 'off' });
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
