/**
 * POST /api/cardprovider/webhook — receives the card provider's signed events
 * and applies payment results to store orders, exactly once (docs/contract.md#spec-4-3).
 * Rate limit → signature header → raw body (512 KiB at most) → verify and
 * apply. /api/stripe/webhook serves this same handler (docs/decisions.md#d1).
 */
import { cardWebhookErrorResponse } from '@/lib/http/errors';
import { webhookRoute } from '@/lib/routes/families';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';
import { signatureFrom } from '@/lib/webhooks/card/event';
import { handleCardWebhook } from '@/lib/webhooks/card/handle-event';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

// The signature covers the exact bytes sent, so the body is read as text and parsed only once verified.
export const POST = webhookRoute({
  route: '/api/cardprovider/webhook',
  rule: RATE_LIMITS.cardWebhook,
  toErrorResponse: cardWebhookErrorResponse,
  check: (request) => signatureFrom(request.headers),
  handle: (rawBody, signature, services, context) => handleCardWebhook(rawBody, signature, services, context),
});
