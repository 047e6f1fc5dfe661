/**
 * The signature of the store's calls to the service (docs/decisions.md#d15), Stripe's
 * webhook scheme: `X-Store-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>" keyed with STORE_CALLBACK_SECRET>`. A signature older or
 * newer than five minutes is refused, so a captured request cannot be
 * replayed later; the digests are compared in constant time.
 *
 * The companion plugin signs the same way (wordpress/checkout-cart-bridge/
 * includes/functions.php); tests/unit/store-signature.test.ts holds the two
 * together when php is installed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const STORE_SIGNATURE_HEADER = 'x-store-signature';
export const STORE_SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

/** Why a signature was refused (for the request's log line; the caller only ever sees 401). */
export type StoreSignatureProblem = 'missing' | 'malformed' | 'stale' | 'mismatch';

function digest(secret: string, timestamp: string, rawBody: string): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest();
}

/** The header value for a body: what the plugin sends (and the stand-ins and tests). */
export function signStoreCallback(rawBody: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const timestamp = String(nowSeconds);
  return `t=${timestamp},v1=${digest(secret, timestamp, rawBody).toString('hex')}`;
}

/** undefined when the header signs `rawBody` with `secret` within the tolerance, else what is wrong with it. */
export function storeSignatureProblem(
  header: string | null,
  rawBody: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): StoreSignatureProblem | undefined {
  if (header === null || header.trim() === '') return 'missing';
  let timestamp: string | undefined;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value = ''] = part.trim().split('=', 2);
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = value;
    // Several v1 while the plugin's secret is being changed, as Stripe does; each is 32 bytes of hex.
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) candidates.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || candidates.length === 0) return 'malformed';
  if (Math.abs(nowSeconds - Number(timestamp)) > STORE_SIGNATURE_TOLERANCE_SECONDS) return 'stale';
  const expected = digest(secret, timestamp, rawBody);
  let matched = false;
  // Every candidate is compared, so the time taken does not say which one matched.
  for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  return matched ? undefined : 'mismatch';
}
