/** STORE_MAX_CONCURRENCY and STORE_RESERVED_SLOTS (docs/operations.md, "Store shielding"). */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/lib/config';

const test = (env: Record<string, string>) => parseConfig({ NODE_ENV: 'test', ...env });

describe('store shielding configuration', () => {
  it('has no cap unless STORE_MAX_CONCURRENCY is set', () => {
    expect(test({}).storeConcurrency).toBeUndefined();
  });

  it('splits the cap by default: half for checkout, a quarter for the webhooks, the rest shared', () => {
    expect(test({ STORE_MAX_CONCURRENCY: '10' }).storeConcurrency).toEqual({ limit: 10, reserved: { checkout: 5, webhook: 2 } });
    expect(test({ STORE_MAX_CONCURRENCY: '1' }).storeConcurrency).toEqual({ limit: 1, reserved: { checkout: 0, webhook: 0 } });
    expect(test({ STORE_MAX_CONCURRENCY: '3' }).storeConcurrency).toEqual({ limit: 3, reserved: { checkout: 1, webhook: 0 } });
  });

  it('takes the split from STORE_RESERVED_SLOTS, a class left out keeping its default', () => {
    expect(test({ STORE_MAX_CONCURRENCY: '8', STORE_RESERVED_SLOTS: 'checkout:6, webhook:1' }).storeConcurrency?.reserved).toEqual({ checkout: 6, webhook: 1 });
    expect(test({ STORE_MAX_CONCURRENCY: '8', STORE_RESERVED_SLOTS: 'webhook:3' }).storeConcurrency?.reserved).toEqual({ checkout: 4, webhook: 3 });
  });

  it('refuses a split that leaves no slot unreserved, and malformed values, by name', () => {
    expect(() => test({ STORE_MAX_CONCURRENCY: '4', STORE_RESERVED_SLOTS: 'checkout:3,webhook:1' })).toThrow(/STORE_RESERVED_SLOTS must leave at least one/);
    expect(() => test({ STORE_MAX_CONCURRENCY: '4', STORE_RESERVED_SLOTS: 'cron:1' })).toThrow(/STORE_RESERVED_SLOTS must be checkout:<slots>,webhook:<slots>/);
    expect(() => test({ STORE_MAX_CONCURRENCY: '0' })).toThrow(/STORE_MAX_CONCURRENCY must be a whole number/);
    expect(() => test({ STORE_MAX_CONCURRENCY: 'many' })).toThrow(/STORE_MAX_CONCURRENCY/);
  });

  it('warns that STORE_RESERVED_SLOTS alone does nothing', () => {
    expect(test({ STORE_RESERVED_SLOTS: 'checkout:2' }).warnings.join('\n')).toMatch(/STORE_RESERVED_SLOTS is set without STORE_MAX_CONCURRENCY/);
  });
});
