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
import { shippingWebhookErrorResponse } from '@/lib/http/errors';
import { webhookRoute } from '@/lib/routes/webhook';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit/rate-limit';
import { handleShippingNotification } from '@/lib/webhooks/shipping/handle-notification';
import { assertShippingWebhookSecret } from '@/lib/webhooks/shipping/secret';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = webhookRoute({
  route: '/api/shipping/webhook',
  rule: RATE_LIMITS.shippingWebhook,
  toErrorResponse: shippingWebhookErrorResponse,
  check: (request, services) => assertShippingWebhookSecret(request, services.config.shipping.webhookSecrets),
  handle: async (rawBody, _checked, services, context) => {
    await handleShippingNotification(rawBody, services, context);
    return { received: true };
  },
});
