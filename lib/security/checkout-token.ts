/** Checkout tokens: HS256 JWTs whose `sub` is the order id (docs/decisions.md#d3). */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Config } from '@/lib/config';
import { InvalidTokenError } from '@/lib/errors';
import { parseOrderId } from '@/lib/order-id';

/** The token settings; `previousSecret` only verifies: tokens signed before the last rotation verify until they expire. */
type CheckoutTokenOptions = Pick<NonNullable<Config['token']>, 'secret'> & Partial<NonNullable<Config['token']>>;

const ALGORITHM = 'HS256';
const TTL = /^(\d+)\s*(s|m|h|d)?$/;
const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
const MAX_TTL_SECONDS = 7 * 24 * 60 * 60;

function key(secret: string): Uint8Array<ArrayBuffer> {
  if (Buffer.byteLength(secret, 'utf8') < 32) {
    throw new Error('CHECKOUT_TOKEN_SECRET must be at least 32 bytes long');
  }
  return new TextEncoder().encode(secret);
}

/** Imported once: given raw bytes, jose imports a key per call (a third of a token check in the bench). */
const verificationKeys = new Map<string, Promise<CryptoKey>>();
const MAX_CACHED_KEYS = 8;

function verificationKey(secret: string): Promise<CryptoKey> {
  let cached = verificationKeys.get(secret);
  if (!cached) {
    cached = crypto.subtle.importKey('raw', key(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    if (verificationKeys.size >= MAX_CACHED_KEYS) verificationKeys.clear();
    verificationKeys.set(secret, cached);
  }
  return cached;
}

export function parseTtl(ttl: number | string): number {
  const match = typeof ttl === 'string' ? TTL.exec(ttl.trim()) : undefined;
  if (match === null) throw new Error(`Invalid token lifetime "${ttl}": use e.g. 900, 30m, 2h or 1d`);
  const seconds = match === undefined ? Number(ttl) : Number(match[1]) * TTL_UNITS[match[2] ?? 's']!;
  if (!Number.isInteger(seconds) || seconds <= 0 || seconds > MAX_TTL_SECONDS) {
    throw new Error('Token lifetime must be between 1 second and 7 days');
  }
  return seconds;
}

export async function mintCheckoutToken(orderId: number, options: CheckoutTokenOptions & { ttl?: number | string; now?: Date }) {
  // A token is minted only for an id its verification reads back.
  if (!Number.isSafeInteger(orderId) || parseOrderId(String(orderId)) !== orderId) throw new Error('Order id must be a positive integer of at most 15 digits');
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(String(orderId))
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + parseTtl(options.ttl ?? '30m'));
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  return jwt.sign(key(options.secret));
}

export async function verifyCheckoutToken(token: string, options: CheckoutTokenOptions): Promise<number> {
  const subject = await verifiedSubject(token, options.secret, options)
    .catch((error: unknown) => {
      // Only a signature mismatch can mean "signed before the rotation"; an expired or malformed token stays refused.
      if (!options.previousSecret || !(error instanceof joseErrors.JWSSignatureVerificationFailed)) throw error;
      return verifiedSubject(token, options.previousSecret, options);
    })
    .catch((error: unknown) => {
      throw new InvalidTokenError(tokenFailureReason(error));
    });
  const orderId = parseOrderId(subject);
  if (orderId === undefined) throw new InvalidTokenError('subject is not an order id');
  return orderId;
}

async function verifiedSubject(token: string, secret: string, options: CheckoutTokenOptions): Promise<string | undefined> {
  const { payload } = await jwtVerify(token, await verificationKey(secret), {
    algorithms: [ALGORITHM],
    requiredClaims: ['exp', 'sub'],
    ...(options.issuer ? { issuer: options.issuer } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
  });
  return payload.sub;
}

function tokenFailureReason(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim} failed validation`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature mismatch';
  return 'malformed';
}
