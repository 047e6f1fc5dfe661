/** Each malformed variable reads what it must be, the same whichever way it is wrong, never zod's own text or the value. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';

const URL = 'must be an http:// or https:// URL';
const CASES: [name: string, values: string[], expected: string][] = [
  ['NODE_ENV', ['staging'], 'must be development, production or test'],
  ['WOOCOMMERCE_URL', ['abc', 'ftp://x.test'], URL],
  ['WOOCOMMERCE_SITE_URL', ['abc', 'https://x.test/?q'], "must be an http:// or https:// URL without query or fragment: the store's Site Address (WordPress Settings → General)"],
  ['TRUST_PROXY_HOPS', ['abc', '0', '1.5', '11'], 'must be a whole number from 1 to 10'],
  ['UPSTREAM_TIMEOUT_MS', ['abc', '0', '120001'], 'must be a whole number of milliseconds from 1 to 120000'],
  ['STORE_MAX_CONCURRENCY', ['abc', '1001'], 'must be a whole number of concurrent store calls from 1 to 1000'],
  ['RECONCILE_WINDOW_HOURS', ['abc', '721'], 'must be a whole number of hours from 1 to 720 (the card provider keeps events for 30 days)'],
  ['AUTHORIZATION_EXPIRY_HOURS', ['abc', '168'], 'must be a whole number of hours from 1 to 167 (authorizations lapse after 168)'],
  ['REDIS_URL', ['abc', 'https://x.test'], 'must be a redis:// or rediss:// URL'],
  ['STRIPE_CAPTURE', ['later'], 'must be automatic, on_shipment, manual (or unset)'],
  ['AUTHORIZATION_EXPIRY_ACTION', ['cancel'], 'must be report or capture (or unset)'],
  ['SHIPMENT_TRACKING_META', ['yes'], 'must be on or off (or unset)'],
  ['CARD_PAYMENT_METHOD_TITLE', ['x'.repeat(201)], 'must be at most 200 characters long'],
  ['CRON_SECRET', ['short'], 'must be at least 16 characters long'],
  ['STRIPE_SECRET_KEY', ['pk_live_x'], 'must start with "sk_" or "rk_"'],
  ['CARD_LIFECYCLE_EVENTS', ['refunds,chargebacks'], 'must be a comma-separated list of refunds, disputes, async, reviews (or empty)'],
  // No message of its own: the service's generic one.
  ['REDIS_TIMEOUT_MS', ['abc', '0'], 'is malformed'],
  ['CLIENT_IP_HEADER', ['Bad Header!'], 'is malformed'],
  ['SHIPPING_WEBHOOK_AUTH', ['none'], 'is malformed'],
];

describe('configuration messages', () => {
  it.each(CASES)('%s names what it must be', (name, values, expected) => {
    for (const value of values) {
      expect(() => parseConfig({ NODE_ENV: 'test', [name]: value })).toThrow(`Invalid configuration: ${name} ${expected}`);
    }
  });

  it('names every malformed variable in one message, each once, with no value', () => {
    let message = '';
    try {
      parseConfig({ NODE_ENV: 'test', TRUST_PROXY_HOPS: 'SECRET_A', UPSTREAM_TIMEOUT_MS: 'SECRET_B', REDIS_KEY_PREFIX: 'SECRET C' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'Invalid configuration: TRUST_PROXY_HOPS must be a whole number from 1 to 10; REDIS_KEY_PREFIX is malformed; UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds from 1 to 120000',
    );
  });
});
