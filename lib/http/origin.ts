/**
 * Origin check and CORS for the checkout endpoints (docs/decisions.md#d4). A present Origin always
 * wins: `Origin: null` (sandboxed iframes, file: pages) matches nothing and no Referer overrides it.
 */
import { InvalidOriginError } from '@/lib/errors';

export function requestOrigin(headers: Headers): string | undefined {
  const origin = headers.get('origin');
  if (origin !== null) return origin.trim();
  const referer = headers.get('referer') ?? '';
  return URL.canParse(referer) ? new URL(referer).origin : undefined;
}

export function allowedOrigin(headers: Headers, allowed: readonly string[]): string | undefined {
  const origin = requestOrigin(headers);
  if (origin === undefined || origin === 'null') return undefined;
  return allowed.includes(origin) ? origin : undefined;
}

export function assertAllowedOrigin(headers: Headers, allowed: readonly string[]): string {
  const origin = allowedOrigin(headers, allowed);
  if (origin === undefined) throw new InvalidOriginError();
  return origin;
}

export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return { Vary: 'Origin' };
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id',
    Vary: 'Origin',
  };
}

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
