import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { UnauthorizedError } from '@/lib/errors';
import { secretMatches } from '@/lib/security/secret-match';
import { assertShippingWebhookSecret } from '@/lib/webhooks/shipping/secret';

const SECRET = 'a-shared-secret-of-some-length';
const request = (query = '', headers: Record<string, string> = {}) =>
  new Request(`https://service.test/api/shipping/webhook${query}`, { method: 'POST', headers });

describe('shipping webhook shared secret', () => {
  it('compares exactly', () => {
    expect(secretMatches(SECRET, SECRET)).toBe(true);
    expect(secretMatches(`${SECRET} `, SECRET)).toBe(false);
    expect(secretMatches(SECRET.slice(1), SECRET)).toBe(false);
    expect(secretMatches('', SECRET)).toBe(false);
  });

  it('is not checked when none is configured', () => {
    expect(() => assertShippingWebhookSecret(request(), [])).not.toThrow();
  });

  it('accepts the query parameter or the header', () => {
    expect(() => assertShippingWebhookSecret(request(`?secret=${encodeURIComponent(SECRET)}`), [SECRET])).not.toThrow();
    expect(() => assertShippingWebhookSecret(request('', { 'x-webhook-secret': SECRET }), [SECRET])).not.toThrow();
    expect(() => assertShippingWebhookSecret(request('?secret=wrong', { 'x-webhook-secret': SECRET }), [SECRET])).not.toThrow();
  });

  it('refuses a missing or wrong secret', () => {
    expect(() => assertShippingWebhookSecret(request(), [SECRET])).toThrow(UnauthorizedError);
    expect(() => assertShippingWebhookSecret(request('?secret=wrong'), [SECRET])).toThrow(UnauthorizedError);
    expect(() => assertShippingWebhookSecret(request('?Secret=' + SECRET), [SECRET])).toThrow(UnauthorizedError);
    expect(() => assertShippingWebhookSecret(request('', { 'x-webhook-secret': 'wrong' }), [SECRET])).toThrow(UnauthorizedError);
  });

  it('accepts any of several secrets while one is being rotated, and only those', () => {
    const NEXT = 'the-next-shared-secret-value';
    const config = parseConfig({ SHIPPING_WEBHOOK_SECRET: ` ${NEXT} , ${SECRET} ` });
    expect(config.shipping.webhookSecrets).toEqual([NEXT, SECRET]);
    for (const secret of [NEXT, SECRET]) {
      expect(() => assertShippingWebhookSecret(request(`?secret=${encodeURIComponent(secret)}`), config.shipping.webhookSecrets)).not.toThrow();
      expect(() => assertShippingWebhookSecret(request('', { 'x-webhook-secret': secret }), config.shipping.webhookSecrets)).not.toThrow();
    }
    for (const wrong of ['wrong', `${NEXT},${SECRET}`, NEXT.slice(1), '']) {
      expect(() => assertShippingWebhookSecret(request(`?secret=${encodeURIComponent(wrong)}`), config.shipping.webhookSecrets), wrong).toThrow(UnauthorizedError);
    }
    // Each one is held to the length rule; the message names the variable, never a value.
    expect(() => parseConfig({ SHIPPING_WEBHOOK_SECRET: `${NEXT},short` })).toThrow(/SHIPPING_WEBHOOK_SECRET/);
    expect(() => parseConfig({ SHIPPING_WEBHOOK_SECRET: `${NEXT},short` })).not.toThrow(new RegExp(NEXT));
    expect(() => parseConfig({ SHIPPING_WEBHOOK_SECRET: ' , ' })).toThrow(/SHIPPING_WEBHOOK_SECRET/);
  });

  it('production warns at start when it is unset by SHIPPING_WEBHOOK_AUTH=off, and not when it is set', () => {
    const production = {
      NODE_ENV: 'production',
      WOOCOMMERCE_URL: 'https://shop.test',
      WOOCOMMERCE_CONSUMER_KEY: 'ck_x',
      WOOCOMMERCE_CONSUMER_SECRET: 'cs_x',
      STRIPE_SECRET_KEY: 'sk_test_x',
      STRIPE_WEBHOOK_SECRET: 'whsec_x',
      CHECKOUT_TOKEN_SECRET: 'x'.repeat(32),
      ALLOWED_ORIGINS: 'https://storefront.test',
    };
    const optedOut = parseConfig({ ...production, SHIPPING_WEBHOOK_AUTH: 'off' });
    expect(optedOut.warnings.some((w) => w.startsWith('SHIPPING_WEBHOOK_SECRET is not set'))).toBe(true);
    expect(parseConfig({ ...production, SHIPPING_WEBHOOK_SECRET: SECRET }).warnings.some((w) => w.includes('SHIPPING_WEBHOOK_SECRET'))).toBe(false);
  });
});
