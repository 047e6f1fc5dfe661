// The shipping webhook's optional shared secret (docs/decisions.md#d11): ShipStation's V1 webhooks cannot send
// headers, so it usually rides in the URL as `?secret=`.
import { UnauthorizedError } from '@/lib/errors';
import { secretMatches } from '@/lib/security/secret-match';

export const SECRET_HEADER = 'x-webhook-secret';
export const SECRET_QUERY_PARAMETER = 'secret';

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
