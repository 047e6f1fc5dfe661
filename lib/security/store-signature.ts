/**
 * The signature of the store's calls (docs/decisions.md#d15). Method and path are signed so a body
 * signed for one action is no other; the plugin's functions.php signs the same string.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const STORE_SIGNATURE_HEADER = 'x-store-signature';
export const STORE_SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export interface StoreCall {
  method: string;
  path: string;
  rawBody: string;
}

/** For the log line; the caller sees 401. `old_scheme`: the body-only `v1` of plugins before 1.3.0. */
export type StoreSignatureProblem = 'missing' | 'malformed' | 'old_scheme' | 'stale' | 'mismatch';

export function storeSignedPayload(timestamp: string, call: StoreCall): string {
  const path = /^https?:\/\//i.test(call.path) ? new URL(call.path).pathname : call.path.split('?', 1)[0]!;
  return `${timestamp}.${call.method.toUpperCase()} ${path}.${call.rawBody}`;
}

function digest(secret: string, timestamp: string, call: StoreCall): Buffer {
  return createHmac('sha256', secret).update(storeSignedPayload(timestamp, call), 'utf8').digest();
}

export function signStoreCallback(call: StoreCall, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const timestamp = String(nowSeconds);
  return `t=${timestamp},v2=${digest(secret, timestamp, call).toString('hex')}`;
}

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
    // Several v2 while the secret is being changed, as Stripe does.
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
