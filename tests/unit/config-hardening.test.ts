/** Configuration of the hardening settings (docs/decisions.md#d5, docs/decisions.md#d11): the client-IP header and the shipping webhook's authentication. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { COMPLETE_PRODUCTION_ENV } from '../support/production-env';
import { ConfigError } from '@/lib/errors';

const complete = COMPLETE_PRODUCTION_ENV;

describe('CLIENT_IP_HEADER', () => {
  it('defaults to X-Forwarded-For and takes any header name in lower case', () => {
    expect(parseConfig(complete).clientIpHeader).toBe('x-forwarded-for');
    expect(parseConfig({ ...complete, CLIENT_IP_HEADER: ' CF-Connecting-IP ' }).clientIpHeader).toBe('cf-connecting-ip');
  });

  it('refuses a value that is no header name, naming the variable', () => {
    expect(() => parseConfig({ ...complete, CLIENT_IP_HEADER: 'x real ip' })).toThrow(ConfigError);
    expect(() => parseConfig({ ...complete, CLIENT_IP_HEADER: 'x-real-ip: 1' })).toThrow(/CLIENT_IP_HEADER/);
  });
});

describe('SHIPPING_WEBHOOK_AUTH', () => {
  const withoutSecret = { ...complete, SHIPPING_WEBHOOK_SECRET: undefined };

  it('refuses a production start without SHIPPING_WEBHOOK_SECRET, naming both variables', () => {
    expect(() => parseConfig(withoutSecret)).toThrow(ConfigError);
    expect(() => parseConfig(withoutSecret)).toThrow(/SHIPPING_WEBHOOK_SECRET.*SHIPPING_WEBHOOK_AUTH=off/);
  });

  it('starts without the secret when the operator opts out, with a warning', () => {
    const config = parseConfig({ ...withoutSecret, SHIPPING_WEBHOOK_AUTH: 'off' });
    expect(config.shipping.unauthenticatedAllowed).toBe(true);
    expect(config.warnings.join('\n')).toMatch(/SHIPPING_WEBHOOK_SECRET is not set and SHIPPING_WEBHOOK_AUTH=off/);
  });

  it('needs no opt-out when the secret is set, nor outside production', () => {
    expect(parseConfig(complete).warnings).toEqual([]);
    expect(() => parseConfig({ ...withoutSecret, NODE_ENV: 'test' })).not.toThrow();
  });

  it('accepts only "off"', () => {
    expect(() => parseConfig({ ...complete, SHIPPING_WEBHOOK_AUTH: 'no' })).toThrow(/SHIPPING_WEBHOOK_AUTH/);
  });
});
