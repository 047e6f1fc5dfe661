/**
 * POST /api/shipping/webhook — shipment notifications from the shipping
 * provider (docs/contract.md#spec-4-4): marks `processing` / `awaiting_shipment` orders
 * `shipped` with tracking details. Real ShipStation deliveries carry only a
 * `resource_url`, which is read from ShipStation (docs/decisions.md#d11).
 *
 * Order of checks: rate limit (429), shared secret when configured (401,
 * before the body is read, so an unauthenticated sender costs no parsing),
 * body size (413); everything else answers 200 `{received: true}`.
 */
import { WEBHOOK_BODY_LIMIT, readBodyText } from '@/lib/http/body';
import { shippingWebhookErrorResponse } from '@/lib/http/errors';
import { enforceRateLimit, runRoute } from '@/lib/http/route';
import { RATE_LIMITS } from '@/lib/security/rate-limit';
import { getServices } from '@/lib/services';
import { handleShippingNotification } from '@/lib/webhooks/shipping/handle-notification';
import { assertShippingWebhookSecret } from '@/lib/webhooks/shipping/secret';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  return runRoute({ route: '/api/shipping/webhook', request, toErrorResponse: shippingWebhookErrorResponse }, async (context) => {
    const services = getServices();
    await enforceRateLimit(services, RATE_LIMITS.shippingWebhook, request.headers);
    assertShippingWebhookSecret(request, services.config.shipping.webhookSecrets);
    await handleShippingNotification(await readBodyText(request, WEBHOOK_BODY_LIMIT), services, context);
    return { body: { received: true } };
  });
}
