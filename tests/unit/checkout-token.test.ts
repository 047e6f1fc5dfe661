import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { InvalidTokenError } from '@/lib/errors';
import { mintCheckoutToken, parseTtl, verifyCheckoutToken } from '@/lib/security/checkout-token';

const secret = 'unit-test-secret-that-is-long-enough-0123';
const key = new TextEncoder().encode(secret);

async function rejection(token: string, options: Parameters<typeof verifyCheckoutToken>[1] = { secret }) {
  const error = await verifyCheckoutToken(token, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidTokenError);
  return error as InstanceType<typeof InvalidTokenError>;
}

describe('checkout token', () => {
  it('round-trips an order id', async () => {
    const token = await mintCheckoutToken(1234, { secret });
    expect(token.split('.')).toHaveLength(3);
    await expect(verifyCheckoutToken(token, { secret })).resolves.toBe(1234);
  });

  it('rejects an expired token', async () => {
    const token = await mintCheckoutToken(1, { secret, ttl: 60, now: new Date(Date.now() - 3_600_000) });
    expect((await rejection(token)).details).toEqual({ reason: 'expired' });
  });

  it('rejects a token signed with another secret', async () => {
    const token = await mintCheckoutToken(1, { secret: 'another-secret-that-is-long-enough-012345' });
    expect((await rejection(token)).details).toEqual({ reason: 'signature mismatch' });
  });

  it('rejects alg "none"', async () => {
    const token = new UnsecuredJWT({}).setSubject('1').setExpirationTime('10m').encode();
    await rejection(token);
  });

  it('rejects other HMAC algorithms with the right key', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setSubject('1').setExpirationTime('10m').sign(key);
    expect((await rejection(token)).details).toEqual({ reason: 'algorithm not allowed' });
  });

  it('rejects a token without sub or exp, or whose sub is not an order id', async () => {
    await rejection(await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('10m').sign(key));
    await rejection(await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('1').sign(key));
    for (const sub of ['0', '-3', '12abc', '1.5', '007']) {
      await rejection(await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('10m').sign(key));
    }
  });

  it('checks issuer and audience when configured', async () => {
    const options = { secret, issuer: 'https://shop.example.com', audience: 'checkout' };
    const good = await mintCheckoutToken(5, { ...options });
    await expect(verifyCheckoutToken(good, options)).resolves.toBe(5);
    await rejection(await mintCheckoutToken(5, { secret }), options);
    await rejection(await mintCheckoutToken(5, { ...options, audience: 'other' }), options);
  });

  it('still verifies a token signed with the previous secret after a rotation, and only with the previous one configured', async () => {
    const previous = 'the-secret-before-the-rotation-0123456789';
    const minted = await mintCheckoutToken(42, { secret: previous });
    await expect(verifyCheckoutToken(minted, { secret, previousSecret: previous })).resolves.toBe(42);
    expect((await rejection(minted, { secret })).details).toEqual({ reason: 'signature mismatch' });
    // New tokens are signed with the current secret: they verify without the previous one.
    const fresh = await mintCheckoutToken(43, { secret, previousSecret: previous });
    await expect(verifyCheckoutToken(fresh, { secret })).resolves.toBe(43);
    await rejection(fresh, { secret: previous });
  });

  it('refuses an expired token signed with the previous secret, and one signed with neither', async () => {
    const previous = 'the-secret-before-the-rotation-0123456789';
    const expired = await mintCheckoutToken(42, { secret: previous, ttl: 60, now: new Date(Date.now() - 3_600_000) });
    expect((await rejection(expired, { secret, previousSecret: previous })).details).toEqual({ reason: 'expired' });
    const stranger = await mintCheckoutToken(42, { secret: 'some-other-secret-altogether-0123456789' });
    expect((await rejection(stranger, { secret, previousSecret: previous })).details).toEqual({ reason: 'signature mismatch' });
  });

  it('rejects garbage', async () => {
    await rejection('not-a-jwt');
    await rejection('a.b.c');
  });

  it('parses lifetimes and refuses silly ones', () => {
    expect(parseTtl('30m')).toBe(1800);
    expect(parseTtl('2h')).toBe(7200);
    expect(parseTtl('90')).toBe(90);
    expect(parseTtl(45)).toBe(45);
    expect(() => parseTtl('0m')).toThrow();
    expect(() => parseTtl('8d')).toThrow();
    expect(() => parseTtl('soon')).toThrow();
  });

  it('refuses to mint with a short secret or a bad order id', async () => {
    await expect(mintCheckoutToken(1, { secret: 'short' })).rejects.toThrow(/32 bytes/);
    await expect(mintCheckoutToken(0, { secret })).rejects.toThrow(/positive integer/);
  });
});
