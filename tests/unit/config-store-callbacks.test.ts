/** STRIPE_CAPTURE and STORE_CALLBACK_SECRET (docs/integrations/woocommerce-plugin.md, "From the WooCommerce admin"): parsed once, defaults untouched. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';

const parse = (env: Record<string, string>) => parseConfig({ NODE_ENV: 'test', STRIPE_SECRET_KEY: 'sk_test_capture', ...env });

describe('STRIPE_CAPTURE', () => {
  it('is automatic by default (the spec), for the service and its card client', () => {
    expect(parse({}).capture).toBe('automatic');
    expect(parse({}).card?.capture).toBe('automatic');
    expect(parse({ STRIPE_CAPTURE: '' }).capture).toBe('automatic');
  });

  it('takes on_shipment and manual', () => {
    expect(parse({ STRIPE_CAPTURE: 'on_shipment' }).card?.capture).toBe('on_shipment');
    expect(parse({ STRIPE_CAPTURE: 'manual' }).capture).toBe('manual');
  });

  it('names itself and what it must be, for anything else', () => {
    expect(() => parse({ STRIPE_CAPTURE: 'later' })).toThrow('STRIPE_CAPTURE must be automatic, on_shipment, manual (or unset)');
  });
});

describe('STORE_CALLBACK_SECRET', () => {
  it('is unset by default: the store routes refuse', () => {
    expect(parse({}).storeCallbackSecret).toBeUndefined();
  });

  it('must be at least 32 characters, and its value is never printed', () => {
    const short = 'too-short-secret';
    expect(() => parse({ STORE_CALLBACK_SECRET: short })).toThrow('STORE_CALLBACK_SECRET must be at least 32 characters long');
    try {
      parse({ STORE_CALLBACK_SECRET: short });
    } catch (error) {
      expect(String(error)).not.toContain(short);
    }
    expect(parse({ STORE_CALLBACK_SECRET: 'x'.repeat(32) }).storeCallbackSecret).toBe('x'.repeat(32));
  });
});
