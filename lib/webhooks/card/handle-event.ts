/**
 * The card provider's webhook use case (spec 4.3): verify the raw body against
 * its signature, then apply the event by type. Handled types change their
 * order exactly once; every other type, and every event without a usable
 * order id, is acknowledged and touches nothing.
 */
import type { RequestContext } from '@/lib/http/route';
import type { Services } from '@/lib/services';
import { readCardEvent, readPaymentIntent, type PaymentIntentFacts } from '@/lib/webhooks/card/event';
import { applyEventOnce } from '@/lib/webhooks/card/exactly-once';
import { applyPaymentFailed } from '@/lib/webhooks/card/payment-failed';
import { applyPaymentSucceeded } from '@/lib/webhooks/card/payment-succeeded';

export interface CardWebhookResponse {
  received: true;
}

type IntentHandler = (orderId: number, intent: PaymentIntentFacts, services: Services) => Promise<string>;

const HANDLERS = new Map<string, IntentHandler>([
  ['payment_intent.succeeded', applyPaymentSucceeded],
  ['payment_intent.payment_failed', applyPaymentFailed],
]);

export async function handleCardWebhook(
  rawBody: string,
  signature: string,
  services: Services,
  context: RequestContext,
): Promise<CardWebhookResponse> {
  const event = readCardEvent(services.card().verifyWebhookEvent(rawBody, signature));
  context.eventId = event.id;
  context.eventType = event.type;

  const handler = HANDLERS.get(event.type);
  if (!handler) {
    context.outcome = 'ignored_event_type';
    return { received: true };
  }

  const intent = readPaymentIntent(event.object);
  if (intent.orderId === undefined) {
    context.outcome = 'no_order_id';
    return { received: true };
  }
  const orderId = intent.orderId;
  context.orderId = orderId;
  context.outcome = await applyEventOnce(services, orderId, event.id, () => handler(orderId, intent, services));
  return { received: true };
}
