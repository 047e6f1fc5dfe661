import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mintCheckoutToken } from '@/client/server';
import * as service from '@/lib/security/checkout-token';

const secret = 'storefront-server-secret-long-enough-0123';
const now = new Date('2026-11-26T12:00:00Z');

afterEach(() => vi.unstubAllGlobals());

describe('checkout tokens minted by the storefront client’s server entry', () => {
  it('carry the claims the service verifies, and the service reads the order id back', async () => {
    const token = await mintCheckoutToken(1234, { secret, ttl: '2h', issuer: 'shop', audience: 'checkout', now: new Date() });
    await expect(service.verifyCheckoutToken(token, { secret, issuer: 'shop', audience: 'checkout' })).resolves.toBe(1234);
  });

  it('are the service’s own token for the same order, lifetime and time', async () => {
    for (const ttl of [900, '900', '30m', '2h', '7d'] as const) {
      const options = { secret, ttl, issuer: 'shop', audience: 'checkout', now };
      expect(await mintCheckoutToken(77, options)).toBe(await service.mintCheckoutToken(77, options));
    }
    const token = await mintCheckoutToken(77, { secret, now });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decodeJwt(token)).toEqual({ sub: '77', iat: now.getTime() / 1000, exp: now.getTime() / 1000 + 1800 });
  });

  it('are refused for what the service would not read back: an id, a short secret, a lifetime beyond 7 days', async () => {
    for (const id of [0, -1, 1.5, 1e15, Number.MAX_SAFE_INTEGER + 2]) {
      await expect(mintCheckoutToken(id, { secret })).rejects.toThrow('Order id must be a positive integer');
    }
    await expect(mintCheckoutToken(1, { secret: 'short' })).rejects.toThrow('at least 32 bytes');
    await expect(mintCheckoutToken(1, { secret, ttl: '8d' })).rejects.toThrow('between 1 second and 7 days');
    await expect(mintCheckoutToken(1, { secret, ttl: 'soon' })).rejects.toThrow('Invalid token lifetime');
  });

  it('are never minted in a browser, where the secret would be exposed', async () => {
    vi.stubGlobal('window', {});
    await expect(mintCheckoutToken(1, { secret })).rejects.toThrow('server only');
  });
});
