/**
 * The shipping webhook's optional shared secret (DECISIONS 11).
 *
 * ShipStation's V1 webhooks cannot send custom headers, so the secret usually
 * rides in the subscribed URL as `?secret=…`; other senders may use the
 * `x-webhook-secret` header. Either one matching is enough, compared in
 * constant time (lib/security/secret-match.ts).
 */
import { UnauthorizedError } from '@/lib/errors';
import { secretMatches } from '@/lib/security/secret-match';

export const SECRET_HEADER = 'x-webhook-secret';
export const SECRET_QUERY_PARAMETER = 'secret';

/** Throws UnauthorizedError (401, no effect) when a secret is configured and the request does not carry it. */
export function assertShippingWebhookSecret(request: Request, expected: string | undefined): void {
  if (!expected) return;
  const candidates = [request.headers.get(SECRET_HEADER), new URL(request.url).searchParams.get(SECRET_QUERY_PARAMETER)];
  const matched = candidates.some((candidate) => candidate !== null && secretMatches(candidate, expected));
  if (!matched) throw new UnauthorizedError();
}
