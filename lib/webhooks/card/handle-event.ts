/**
 * The card provider's events (spec 4.3), in two steps: the webhook verifies
 * the raw body against its signature, then applies the verified event; payment
 * reconciliation (lib/cron/reconcile-payments.ts) applies events it listed from
 * the provider through the very same second step. Handled types change their
 * order exactly once, under the order's lock, whoever brings the event first;
 * every other type, and every event without a usable order id, is
 * acknowledged and touches nothing.
 */
import type { RequestContext } from '@/lib/http/route';
import type { Services } from '@/lib/services';
import { readCardEvent, readPaymentIntent, type CardEvent, type PaymentIntentFacts } from '@/lib/webhooks/card/event';
import { applyEventOnce, DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
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

/** The event types that change orders: what reconciliation asks the provider for. */
export const HANDLED_EVENT_TYPES: readonly string[] = [...HANDLERS.keys()];

export const IGNORED_EVENT_TYPE = 'ignored_event_type';
export const NO_ORDER_ID = 'no_order_id';

/** Outcomes after which the order was left as it was. */
const UNCHANGED: ReadonlySet<string> = new Set([DUPLICATE_EVENT, IGNORED_EVENT_TYPE, NO_ORDER_ID, 'already_paid', 'not_pending']);

/** Whether an outcome of applyCardEvent wrote to the order. */
export function changedOrder(outcome: string): boolean {
  return !UNCHANGED.has(outcome);
}

export interface AppliedCardEvent {
  outcome: string;
  orderId: number | undefined;
}

/** The webhook: verify, then apply. */
export async function handleCardWebhook(
  rawBody: string,
  signature: string,
  services: Services,
  context: RequestContext,
): Promise<CardWebhookResponse> {
  const event = readCardEvent(services.card().verifyWebhookEvent(rawBody, signature));
  context.eventId = event.id;
  context.eventType = event.type;
  context.outcome = (await applyCardEvent(event, services, context)).outcome;
  return { received: true };
}

/**
 * Applies an event the provider vouches for (signed, or listed from its API)
 * exactly once: the same event id is remembered whichever path applied it.
 * The order id goes into `context` before the store is touched, so a failure's log line names it.
 */
export async function applyCardEvent(
  event: CardEvent,
  services: Services,
  context: Pick<RequestContext, 'orderId'> = {},
): Promise<AppliedCardEvent> {
  const handler = HANDLERS.get(event.type);
  if (!handler) return { outcome: IGNORED_EVENT_TYPE, orderId: undefined };

  const intent = readPaymentIntent(event.object);
  if (intent.orderId === undefined) return { outcome: NO_ORDER_ID, orderId: undefined };
  const orderId = intent.orderId;
  context.orderId = orderId;
  const outcome = await applyEventOnce(services, orderId, event.id, () => handler(orderId, intent, services));
  return { outcome, orderId };
}
