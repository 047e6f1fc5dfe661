// The card webhook (docs/contract.md#spec-4-3): the event verified, then applied as reconciliation applies it.
import { applyCardEvent } from '@/lib/card-payments/apply-event';
import type { RequestContext } from '@/lib/log';
import type { Services } from '@/lib/services';

export async function handleCardWebhook(
  rawBody: string,
  signature: string,
  services: Services,
  context: RequestContext,
): Promise<{ received: true }> {
  const event = (await services.card()).verifyWebhookEvent(rawBody, signature);
  context.eventId = event.id;
  context.eventType = event.type;
  context.outcome = (await applyCardEvent(event, services, context)).outcome.name;
  return { received: true };
}
