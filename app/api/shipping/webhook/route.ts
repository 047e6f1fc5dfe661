/**
 * POST /api/shipping/webhook — shipment notifications from the shipping
 * provider (docs/contract.md#spec-4-4): marks `processing` / `awaiting_shipment` orders
 * `shipped` with tracking details. Real ShipStation deliveries carry only a
 * `resource_url`, which is read from ShipStation (docs/decisions.md#d11).
 *
 * Order of checks: rate limit (429); a delivery with ShipStation V2's signature headers is
 * verified over its raw body (404 unsigned, 400 stale or badly signed, as ShipStation's guide
 * advises; 503 while its signing keys cannot be read); any other carries the shared secret when
 * configured (401, before the body is read), and a `*_V2` type without a signature is 404;
 * body size (413); everything else answers 200 `{received: true}`.
 */
import { shippingWebhookErrorResponse } from '@/lib/http/errors';
import { log, type RequestContext } from '@/lib/log';
import { WebhookAnswer, webhookRoute } from '@/lib/routes/families';
import type { Services } from '@/lib/services';
import { countRateLimitHitNow } from '@/lib/request-scope';
import { RATE_LIMITS } from '@/lib/shared-state/rate-limit';
import { handleShipStationV2, handleShippingNotification } from '@/lib/webhooks/shipping/handle-notification';
import { claimsV2 } from '@/lib/webhooks/shipping/payload';
import { assertShippingWebhookSecret } from '@/lib/webhooks/shipping/secret';
import { carriesV2Signature, verifyV2Signature } from '@/lib/shipping/signature-v2';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const NOT_FOUND = () => new WebhookAnswer(404, { error: 'Not found' });

async function handleV2(rawBody: string, headers: Headers, services: Services, context: RequestContext): Promise<unknown> {
  // The signing keys may have to be read: an upstream call, so the rate-limit hit is counted first.
  await countRateLimitHitNow();
  const verdict = await verifyV2Signature(headers, rawBody, services.shipStationV2Keys);
  if (!verdict.ok) {
    context.outcome = `v2_signature:${verdict.reason}`;
    if (verdict.reason === 'keys_unavailable') return new WebhookAnswer(503, { error: 'Signing keys unavailable, try again' });
    log.warn('shipping.v2_signature_refused', { reason: verdict.reason });
    return verdict.reason === 'unsigned' ? NOT_FOUND() : new WebhookAnswer(400, { error: 'Invalid signature' });
  }
  await handleShipStationV2(rawBody, services, context);
  return { received: true };
}

export const POST = webhookRoute({
  route: '/api/shipping/webhook',
  rule: RATE_LIMITS.shippingWebhook,
  toErrorResponse: shippingWebhookErrorResponse,
  check: (request, services) => {
    if (carriesV2Signature(request.headers)) return { v2: request.headers };
    assertShippingWebhookSecret(request, services.config.shipping.webhookSecrets);
    return { v2: undefined };
  },
  handle: async (rawBody, checked, services, context) => {
    if (checked.v2) return handleV2(rawBody, checked.v2, services, context);
    if (claimsV2(rawBody)) {
      log.warn('shipping.v2_signature_refused', { reason: 'unsigned' });
      context.outcome = 'v2_signature:unsigned';
      return NOT_FOUND();
    }
    await handleShippingNotification(rawBody, services, context);
    return { received: true };
  },
});
