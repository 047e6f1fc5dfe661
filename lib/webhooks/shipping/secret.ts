/**
 * The shipping webhook's optional shared secret (docs/decisions.md#d11).
 *
 * ShipStation's V1 webhooks cannot send custom headers, so the secret usually
 * rides in the subscribed URL as `?secret=…`; other senders may use the
 * `x-webhook-secret` header. Either one matching any configured secret is
 * enough (several while the secret is being rotated), each compared in
 * constant time (lib/security/secret-match.ts).
 */
import { UnauthorizedError } from '@/lib/errors';
import { secretMatches } from '@/lib/security/secret-match';

export const SECRET_HEADER = 'x-webhook-secret';
export const SECRET_QUERY_PARAMETER = 'secret';

/** Throws UnauthorizedError (401, no effect) when secrets are configured and the request carries none of them. */
export function assertShippingWebhookSecret(request: Request, expected: readonly string[]): void {
  if (expected.length === 0) return;
  const candidates = [request.headers.get(SECRET_HEADER), new URL(request.url).searchParams.get(SECRET_QUERY_PARAMETER)];
  let matched = false;
  // Every pair is compared, a match or not, so the time taken says nothing about which secret matched.
  for (const candidate of candidates) {
    if (candidate === null) continue;
    for (const secret of expected) matched = secretMatches(candidate, secret) || matched;
  }
  if (!matched) throw new UnauthorizedError();
}
