/** Calling the store's routes (/api/store/*) as the companion plugin does: signed with the shared secret. */
import { POST as cancelAuthorizationPOST } from '@/app/api/store/cancel-authorization/route';
import { POST as capturePOST } from '@/app/api/store/capture/route';
import { POST as refundsPOST } from '@/app/api/store/refunds/route';
import { signStoreCallback } from '@/lib/security/store-signature';
import { companionGateway, type CompanionGatewayOptions } from '@/stand-ins/woocommerce/companion-gateway';

export const TEST_STORE_CALLBACK_SECRET = 'test-store-callback-secret-0123456789abcdef';

export const STORE_ROUTES = {
  refunds: { path: '/api/store/refunds', POST: refundsPOST },
  capture: { path: '/api/store/capture', POST: capturePOST },
  cancelAuthorization: { path: '/api/store/cancel-authorization', POST: cancelAuthorizationPOST },
} as const;

export type StoreRoute = keyof typeof STORE_ROUTES;

export interface SignOptions {
  secret?: string;
  /** Unix seconds the signature claims; now by default. */
  at?: number;
  /** A header value to send instead of a signature (null: no header). */
  header?: string | null;
  /** The route whose path is signed, when it is not the one called (a body signed for another action). */
  signedFor?: StoreRoute;
}

/** The header the plugin would send for `body` to `route`'s path (signed as of `at`). */
export function storeSignatureFor(route: StoreRoute, body: unknown, options: Pick<SignOptions, 'secret' | 'at'> = {}): string {
  const rawBody = typeof body === 'string' ? body : JSON.stringify(body);
  return signStoreCallback({ method: 'POST', path: STORE_ROUTES[route].path, rawBody }, options.secret ?? TEST_STORE_CALLBACK_SECRET, options.at);
}

export function storeRequest(route: StoreRoute, body: unknown, options: SignOptions = {}): Request {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const header = options.header !== undefined ? options.header : storeSignatureFor(options.signedFor ?? route, raw, options);
  return new Request(`http://localhost:3000${STORE_ROUTES[route].path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'x-store-signature': header }) },
    body: raw,
  });
}

export async function callStore(route: StoreRoute, body: unknown, options: SignOptions = {}): Promise<{ status: number; body: any }> {
  const response = await STORE_ROUTES[route].POST(storeRequest(route, body, options));
  return { status: response.status, body: await response.json() };
}

/** The companion plugin's gateway, sending to the refunds route handler itself. */
export function testGateway(options: Partial<CompanionGatewayOptions> = {}) {
  return companionGateway({ secret: TEST_STORE_CALLBACK_SECRET, send: (request) => refundsPOST(request), ...options });
}
