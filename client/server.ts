/**
 * Checkout tokens for the storefront's server: the claims the service verifies (HS256 with its
 * CHECKOUT_TOKEN_SECRET, `sub` the order id in decimal, `exp` required, `iss`/`aud` when it checks them).
 * Never import this into code that reaches a browser: whoever holds the secret can pay any order.
 */
import { SignJWT } from 'jose';

export interface MintCheckoutTokenOptions {
  /** The service's CHECKOUT_TOKEN_SECRET, at least 32 bytes. */
  secret: string;
  /** Seconds, or "900", "30m", "2h", "1d"; at most 7 days. Default 30 minutes. */
  ttl?: number | string;
  /** Set when the service has CHECKOUT_TOKEN_ISSUER. */
  issuer?: string;
  /** Set when the service has CHECKOUT_TOKEN_AUDIENCE. */
  audience?: string;
  now?: Date;
}

const MAX_TTL_SECONDS = 7 * 24 * 60 * 60;
// The service reads at most 15 digits, without leading zeros, as an order id.
const ORDER_ID = /^[1-9]\d{0,14}$/;

function ttlSeconds(ttl: number | string): number {
  const match = typeof ttl === 'number' ? undefined : /^(\d+)\s*(s|m|h|d)?$/.exec(ttl.trim());
  if (typeof ttl === 'string' && !match) throw new Error(`Invalid token lifetime "${ttl}": use e.g. 900, 30m, 2h or 1d`);
  const seconds = match ? Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd'] : (ttl as number);
  if (!Number.isInteger(seconds) || seconds <= 0 || seconds > MAX_TTL_SECONDS) throw new Error('Token lifetime must be between 1 second and 7 days');
  return seconds;
}

/** A checkout token for one WooCommerce order, for the storefront's browser to send to the service. */
export async function mintCheckoutToken(orderId: number, options: MintCheckoutTokenOptions): Promise<string> {
  if ('window' in globalThis) throw new Error('mintCheckoutToken runs on the storefront’s server only: the secret must never reach a browser');
  if (!Number.isSafeInteger(orderId) || !ORDER_ID.test(String(orderId))) throw new Error('Order id must be a positive integer of at most 15 digits');
  const key = new TextEncoder().encode(options.secret);
  if (key.byteLength < 32) throw new Error('The checkout token secret must be at least 32 bytes long');
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(orderId))
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds(options.ttl ?? '30m'));
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  return jwt.sign(key);
}
