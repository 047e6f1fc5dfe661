/**
 * Origin check and CORS for the checkout endpoints (docs/decisions.md#d4).
 *
 * The request's origin is its Origin header, else the origin of its Referer.
 * It must equal an allowed origin exactly (scheme, host and port); a look-alike
 * such as https://shop.example.com.evil.test or http:// instead of https:// is
 * not allowed. Only allowed origins get CORS headers.
 *
 * A present Origin header is the browser's word and always wins: `Origin: null`
 * (sandboxed iframes, file: pages, some redirects) is an origin that equals no
 * allowed origin, and a Referer never overrides it.
 */
import { InvalidOriginError } from '@/lib/errors';

export const OPAQUE_ORIGIN = 'null';

export function requestOrigin(headers: Headers): string | undefined {
  const origin = headers.get('origin');
  if (origin !== null) return origin.trim();
  const referer = headers.get('referer');
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/** The request's origin when it is allowed, otherwise undefined. */
export function allowedOrigin(headers: Headers, allowed: readonly string[]): string | undefined {
  const origin = requestOrigin(headers);
  if (origin === undefined || origin === OPAQUE_ORIGIN) return undefined;
  return allowed.includes(origin) ? origin : undefined;
}

export function assertAllowedOrigin(headers: Headers, allowed: readonly string[]): string {
  const origin = allowedOrigin(headers, allowed);
  if (origin === undefined) throw new InvalidOriginError();
  return origin;
}

/** Headers granting an allowed origin; none for any other origin. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return { Vary: 'Origin' };
  // Exposed so a browser storefront can read when a 429's window ends (client/RateLimited.resetAt), how
  // long a 503 SHOP_BUSY asks it to wait, and quote an answer's request id to the shop owner, who finds it
  // on the service's log lines.
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id',
    Vary: 'Origin',
  };
}

/** The answer to a browser's preflight: 204 with the grant for an allowed origin, 403 without one otherwise. */
export function preflightResponse(headers: Headers, allowed: readonly string[]): Response {
  const origin = allowedOrigin(headers, allowed);
  if (origin === undefined) return new Response(null, { status: 403, headers: { Vary: 'Origin' } });
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(origin),
      'Access-Control-Allow-Methods': 'POST, OPTIONS',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': '600',
    },
  });
}
