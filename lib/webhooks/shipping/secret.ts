/**
 * The shipping webhook's optional shared secret (DECISIONS 11).
 *
 * ShipStation's V1 webhooks cannot send custom headers, so the secret usually
 * rides in the subscribed URL as `?secret=…`; other senders may use the
 * `x-webhook-secret` header. Either one matching is enough. Both sides are
 * hashed first, so the comparison takes the same time whatever the length or
 * content of the guess.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '@/lib/errors';

export const SECRET_HEADER = 'x-webhook-secret';
export const SECRET_QUERY_PARAMETER = 'secret';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

export function secretMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** Throws UnauthorizedError (401, no effect) when a secret is configured and the request does not carry it. */
export function assertShippingWebhookSecret(request: Request, expected: string | undefined): void {
  if (!expected) return;
  const candidates = [request.headers.get(SECRET_HEADER), new URL(request.url).searchParams.get(SECRET_QUERY_PARAMETER)];
  const matched = candidates.some((candidate) => candidate !== null && secretMatches(candidate, expected));
  if (!matched) throw new UnauthorizedError();
}
