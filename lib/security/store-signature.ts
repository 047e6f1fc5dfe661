/**
 * The signature of the store's calls to the service (docs/decisions.md#d15):
 * `X-Store-Signature: t=<unix seconds>,v2=<hex HMAC-SHA256 keyed with STORE_CALLBACK_SECRET of
 * "<t>.<METHOD> <path>.<raw body>">`, the path without its query string. Signing the method and
 * path binds a body to its action: `{"order_id":42}` signed for cancel-authorization is no capture.
 * Five minutes either way; digests compared in constant time. The companion plugin signs the same
 * string (wordpress/checkout-cart-bridge/includes/functions.php, held together by
 * tests/unit/store-signature.test.ts when php is installed).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const STORE_SIGNATURE_HEADER = 'x-store-signature';
export const STORE_SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

/** What is signed besides the time: the request as it reaches the service. */
export interface StoreCall {
  method: string;
  /** The URL's path, without query string (`/api/store/capture`); a full URL is cut to its path. */
  path: string;
  rawBody: string;
}

/**
 * Why a signature was refused (for the request's log line; the caller only ever sees 401).
 * `old_scheme`: only the body-only `v1` of plugins before 1.3.0, which no longer names the action.
 */
export type StoreSignatureProblem = 'missing' | 'malformed' | 'old_scheme' | 'stale' | 'mismatch';

function pathOf(path: string): string {
  return /^https?:\/\//i.test(path) ? new URL(path).pathname : path.split('?', 1)[0]!;
}

/** The exact string the HMAC covers: `<t>.<METHOD> <path>.<raw body>`. */
export function storeSignedPayload(timestamp: string, call: StoreCall): string {
  return `${timestamp}.${call.method.toUpperCase()} ${pathOf(call.path)}.${call.rawBody}`;
}

function digest(secret: string, timestamp: string, call: StoreCall): Buffer {
  return createHmac('sha256', secret).update(storeSignedPayload(timestamp, call), 'utf8').digest();
}

/** The header value for a call: what the plugin sends (and the stand-ins and tests). */
export function signStoreCallback(call: StoreCall, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const timestamp = String(nowSeconds);
  return `t=${timestamp},v2=${digest(secret, timestamp, call).toString('hex')}`;
}

/** undefined when the header signs `call` with `secret` within the tolerance, else what is wrong with it. */
export function storeSignatureProblem(
  header: string | null,
  call: StoreCall,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): StoreSignatureProblem | undefined {
  if (header === null || header.trim() === '') return 'missing';
  let timestamp: string | undefined;
  let bodyOnly = false;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value = ''] = part.trim().split('=', 2);
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = value;
    // Several v2 while the secret is being changed, as Stripe does; each is 32 bytes of hex. Other keys are ignored.
    else if (key === 'v2' && /^[0-9a-f]{64}$/i.test(value)) candidates.push(Buffer.from(value, 'hex'));
    else if (key === 'v1') bodyOnly = true;
  }
  if (candidates.length === 0 && bodyOnly) return 'old_scheme';
  if (timestamp === undefined || candidates.length === 0) return 'malformed';
  if (Math.abs(nowSeconds - Number(timestamp)) > STORE_SIGNATURE_TOLERANCE_SECONDS) return 'stale';
  const expected = digest(secret, timestamp, call);
  let matched = false;
  // Every candidate is compared, so the time taken does not say which one matched.
  for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  return matched ? undefined : 'mismatch';
}
