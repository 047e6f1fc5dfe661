import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';

const production = {
  NODE_ENV: 'production',
  WOOCOMMERCE_URL: 'https://shop.example.com',
  WOOCOMMERCE_CONSUMER_KEY: 'ck_live_abc',
  WOOCOMMERCE_CONSUMER_SECRET: 'cs_live_secretvalue',
  STRIPE_SECRET_KEY: 'sk_live_supersecret',
  STRIPE_WEBHOOK_SECRET: 'whsec_supersecret',
  CHECKOUT_TOKEN_SECRET: 'a-very-long-checkout-token-secret-value!',
  ALLOWED_ORIGINS: 'https://shop.example.com',
  SHIPPING_WEBHOOK_SECRET: 'shipping-secret-0123456789',
  CRON_SECRET: 'cron-secret-0123456789abcdef',
};
const PER_INSTANCE = /REDIS_URL is not set: .*per instance/;

describe('shared state configuration', () => {
  it('warns at start in production without REDIS_URL that state is per instance', () => {
    expect(parseConfig(production).warnings.join('\n')).toMatch(PER_INSTANCE);
  });

  it('does not warn in production with REDIS_URL, nor in development or tests without it', () => {
    expect(parseConfig({ ...production, REDIS_URL: 'redis://127.0.0.1:6379' }).warnings).toEqual([]);
    expect(parseConfig({ NODE_ENV: 'development' }).warnings.join('\n')).not.toMatch(/REDIS_URL/);
    expect(parseConfig({ NODE_ENV: 'test' }).warnings.join('\n')).not.toMatch(/REDIS_URL/);
  });

  it('reads REDIS_TIMEOUT_MS, 500 ms by default, and refuses a bad one by name only', () => {
    expect(parseConfig({ NODE_ENV: 'test' }).redisTimeoutMs).toBe(500);
    expect(parseConfig({ NODE_ENV: 'test', REDIS_TIMEOUT_MS: '1500' }).redisTimeoutMs).toBe(1500);
    expect(() => parseConfig({ NODE_ENV: 'test', REDIS_TIMEOUT_MS: 'soon' })).toThrow(/REDIS_TIMEOUT_MS/);
    expect(() => parseConfig({ NODE_ENV: 'test', REDIS_TIMEOUT_MS: '0' })).toThrow(/REDIS_TIMEOUT_MS/);
  });

  it('accepts redis:// and rediss:// only, never printing the URL', () => {
    expect(parseConfig({ NODE_ENV: 'test', REDIS_URL: 'rediss://default:pw@eu1-x.upstash.io:6379' }).redisUrl).toMatch(/^rediss:/);
    let message = '';
    try {
      parseConfig({ NODE_ENV: 'test', REDIS_URL: 'http://user:hunter2@redis.example.com' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('REDIS_URL');
    expect(message).not.toContain('hunter2');
  });
});
