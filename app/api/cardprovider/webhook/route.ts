/**
 * POST /api/cardprovider/webhook — receives the card provider's signed events
 * and applies payment results to store orders, exactly once (docs/contract.md#spec-4-3).
 * Rate limit → signature header → raw body (512 KiB at most) → verify and
 * apply. /api/stripe/webhook serves this same handler (docs/decisions.md#d1).
 */
import { readBodyText, WEBHOOK_BODY_LIMIT } from '@/lib/http/body';
import { cardWebhookErrorResponse } from '@/lib/http/errors';
import { enforceRateLimit, runRoute } from '@/lib/http/route';
import { RATE_LIMITS } from '@/lib/security/rate-limit';
import { getServices } from '@/lib/services';
import { signatureFrom } from '@/lib/webhooks/card/event';
import { handleCardWebhook } from '@/lib/webhooks/card/handle-event';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  return runRoute({ route: '/api/cardprovider/webhook', request, toErrorResponse: cardWebhookErrorResponse }, async (context) => {
    const services = getServices();
    await enforceRateLimit(services, RATE_LIMITS.cardWebhook, request.headers);
    const signature = signatureFrom(request.headers);
    // The signature covers the exact bytes sent, so the body is read as text and parsed only once verified.
    const rawBody = await readBodyText(request, WEBHOOK_BODY_LIMIT);
    return { body: await handleCardWebhook(rawBody, signature, services, context) };
  });
}
