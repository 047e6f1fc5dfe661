import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { ConfigError } from '@/lib/errors';
import { COMPLETE_PRODUCTION_ENV } from '../support/production-env';

describe('ShipStation V2 settings', () => {
  it("default to ShipStation's own API and published signing keys, no key, and delivered orders completed", () => {
    expect(parseConfig(COMPLETE_PRODUCTION_ENV).shippingV2).toEqual({
      apiKey: undefined,
      apiBaseUrl: 'https://api.shipstation.com',
      jwksUrl: 'https://api.shipengine.com/jwks',
      deliveredCompletes: true,
    });
  });

  it('take the key, the URLs without a trailing slash, and SHIPPING_DELIVERED_COMPLETES=off', () => {
    const config = parseConfig({
      ...COMPLETE_PRODUCTION_ENV,
      SHIPSTATION_V2_API_KEY: 'TEST_key',
      SHIPSTATION_V2_API_BASE_URL: 'https://api.shipstation.example/',
      SHIPSTATION_V2_JWKS_URL: 'https://keys.shipstation.example/jwks',
      SHIPPING_DELIVERED_COMPLETES: 'off',
    });
    expect(config.shippingV2).toEqual({
      apiKey: 'TEST_key',
      apiBaseUrl: 'https://api.shipstation.example',
      jwksUrl: 'https://keys.shipstation.example/jwks',
      deliveredCompletes: false,
    });
  });

  it('name every malformed V2 variable at once', () => {
    let error: unknown;
    try {
      parseConfig({ ...COMPLETE_PRODUCTION_ENV, SHIPSTATION_V2_API_BASE_URL: 'api.shipstation.com', SHIPSTATION_V2_JWKS_URL: 'ftp://x', SHIPPING_DELIVERED_COMPLETES: 'yes' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of ['SHIPSTATION_V2_API_BASE_URL', 'SHIPSTATION_V2_JWKS_URL', 'SHIPPING_DELIVERED_COMPLETES']) expect(message).toContain(name);
    expect(message).toContain('SHIPPING_DELIVERED_COMPLETES must be on or off');
  });
});
