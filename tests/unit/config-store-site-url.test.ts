/** WOOCOMMERCE_SITE_URL: the store's Site Address, which WooCommerce signs OAuth 1.0a over (docs/operations.md, Configuration). */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';
import { ConfigError } from '@/lib/errors';
import { COMPLETE_PRODUCTION_ENV } from '../support/production-env';

function messageOf(source: Record<string, string>): string {
  try {
    parseConfig(source);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('WOOCOMMERCE_SITE_URL', () => {
  it('is optional, and kept as written without its trailing slash beside WOOCOMMERCE_URL', () => {
    expect(parseConfig(COMPLETE_PRODUCTION_ENV).store).not.toHaveProperty('siteUrl');
    expect(parseConfig({ ...COMPLETE_PRODUCTION_ENV, WOOCOMMERCE_SITE_URL: '' }).store).not.toHaveProperty('siteUrl');
    const config = parseConfig({ ...COMPLETE_PRODUCTION_ENV, WOOCOMMERCE_URL: 'http://10.0.0.5:8080', WOOCOMMERCE_SITE_URL: 'https://Shop.example.com/store/' });
    expect(config.store).toMatchObject({ url: 'http://10.0.0.5:8080', siteUrl: 'https://Shop.example.com/store' });
  });

  it('set beside an https:// WOOCOMMERCE_URL, a warning says it has no effect', () => {
    const warnings = (url: string) => parseConfig({ ...COMPLETE_PRODUCTION_ENV, WOOCOMMERCE_URL: url, WOOCOMMERCE_SITE_URL: 'https://shop.example.com' }).warnings;
    expect(warnings('https://shop.internal')).toContain(
      'WOOCOMMERCE_SITE_URL is set but WOOCOMMERCE_URL uses https://: requests carry the keys, not an OAuth signature, so it has no effect',
    );
    expect(warnings('http://shop.internal').join('\n')).not.toContain('WOOCOMMERCE_SITE_URL');
  });

  it('a malformed value is named in the start-up message with what it must be, and never printed', () => {
    for (const bad of ['shop.example.com/SECRETVALUE', 'ftp://shop.example.com/SECRETVALUE', 'https://shop.example.com/?SECRETVALUE=1', 'https://user:SECRETVALUE@shop.example.com']) {
      const message = messageOf({ ...COMPLETE_PRODUCTION_ENV, WOOCOMMERCE_SITE_URL: bad, UPSTREAM_TIMEOUT_MS: 'soon' });
      expect(message).toContain("WOOCOMMERCE_SITE_URL must be an http:// or https:// URL without query or fragment: the store's Site Address");
      expect(message).toContain('UPSTREAM_TIMEOUT_MS');
      expect(message).not.toContain('SECRETVALUE');
    }
  });
});
