// The card webhook (docs/contract.md#spec-4-3): verify, then apply; payment reconciliation applies listed events
// through the same applyCardEvent. A type not handled or switched off is 200 with no effect (docs/decisions.md#d24).
import type { CardEvent } from '@/lib/card/events';
import type { Config } from '@/lib/config';
import { InvalidCardEventError } from '@/lib/errors';
import type { RequestContext } from '@/lib/log';
import type { Services } from '@/lib/services';
import { disputeClosed, disputeCreated } from '@/lib/webhooks/card/dispute-created';
import { disputeFundsReinstated, disputeFundsWithdrawn } from '@/lib/webhooks/card/dispute-funds';
import { fraudWarningCreated } from '@/lib/webhooks/card/fraud-warning';
import { applyEventOnce, DUPLICATE_EVENT, processedEventKey } from '@/lib/webhooks/card/exactly-once';
import { unchanged, type CardEventHandler, type CardOutcome } from '@/lib/webhooks/card/handler';
import { orderIdOfEvent, orderLinkOf } from '@/lib/webhooks/card/order-of-event';
import { paymentAuthorized } from '@/lib/webhooks/card/payment-authorized';
import { paymentCanceled } from '@/lib/webhooks/card/payment-canceled';
import { paymentFailed } from '@/lib/webhooks/card/payment-failed';
import { paymentProcessing } from '@/lib/webhooks/card/payment-processing';
import { paymentSucceeded } from '@/lib/webhooks/card/payment-succeeded';
import { chargeRefunded } from '@/lib/webhooks/card/refund';
import { refundUpdated } from '@/lib/webhooks/card/refund-updated';
import { reviewClosed, reviewOpened } from '@/lib/webhooks/card/review';

export interface CardWebhookResponse {
  received: true;
}

const HANDLERS: ReadonlyMap<string, CardEventHandler> = new Map<string, CardEventHandler>([
  ['payment_intent.succeeded', paymentSucceeded],
  ['payment_intent.payment_failed', paymentFailed],
  ['payment_intent.processing', paymentProcessing],
  ['payment_intent.amount_capturable_updated', paymentAuthorized],
  ['payment_intent.canceled', paymentCanceled],
  ['charge.refunded', chargeRefunded],
  ['charge.refund.updated', refundUpdated],
  ['refund.updated', refundUpdated],
  ['charge.dispute.created', disputeCreated],
  ['charge.dispute.closed', disputeClosed],
  ['charge.dispute.funds_withdrawn', disputeFundsWithdrawn],
  ['charge.dispute.funds_reinstated', disputeFundsReinstated],
  ['review.opened', reviewOpened],
  ['review.closed', reviewClosed],
  ['radar.early_fraud_warning.created', fraudWarningCreated],
] as [string, CardEventHandler][]);

type HandlerSettings = Pick<Config, 'lifecycleEvents'> & Partial<Pick<Config, 'capture'>>;

function isOn(setting: CardEventHandler['setting'], config: HandlerSettings): boolean {
  if (setting === 'spec') return true;
  if (setting === 'manual_capture') return (config.capture ?? 'automatic') !== 'automatic';
  return config.lifecycleEvents.has(setting);
}

function handlerFor(type: string, config: HandlerSettings): CardEventHandler | undefined {
  const handler = HANDLERS.get(type);
  return handler && isOn(handler.setting, config) ? handler : undefined;
}

/** What reconciliation asks the provider for. */
export function handledEventTypes(config: HandlerSettings): string[] {
  return [...HANDLERS.keys()].filter((type) => handlerFor(type, config) !== undefined);
}

export const IGNORED_EVENT_TYPE = 'ignored_event_type';
export const NO_ORDER_ID = 'no_order_id';

export interface AppliedCardEvent {
  outcome: CardOutcome;
  orderId: number | undefined;
}

export async function handleCardWebhook(
  rawBody: string,
  signature: string,
  services: Services,
  context: RequestContext,
): Promise<CardWebhookResponse> {
  const event = (await services.card()).verifyWebhookEvent(rawBody, signature);
  context.eventId = event.id;
  context.eventType = event.type;
  context.outcome = (await applyCardEvent(event, services, context)).outcome.name;
  return { received: true };
}

/** The order id goes into `context` before the store is touched, so a failure's log line names it. */
export async function applyCardEvent(
  event: CardEvent,
  services: Services,
  context: Pick<RequestContext, 'orderId'> = {},
): Promise<AppliedCardEvent> {
  const handler = handlerFor(event.type, services.config);
  if (!handler) return { outcome: unchanged(IGNORED_EVENT_TYPE), orderId: undefined };
  if (event.kind === 'unreadable') throw new InvalidCardEventError(event.problem);
  if (event.kind !== handler.kind) throw new InvalidCardEventError('Webhook Error: event does not carry its object');

  // An event applied already costs no provider call to find its order again (redeliveries of refunds and
  // disputes); the check under the order's lock (applyEventOnce) stays the one that decides.
  if (!('orderId' in orderLinkOf(event)) && (await services.processedEvents.has(processedEventKey(event.id)))) {
    return { outcome: unchanged(DUPLICATE_EVENT), orderId: undefined };
  }
  const orderId = await orderIdOfEvent(event, services);
  if (orderId === undefined) return { outcome: unchanged(NO_ORDER_ID), orderId: undefined };
  context.orderId = orderId;
  const outcome = await applyEventOnce(services, orderId, event.id, () => handler.apply(orderId, event as never, services));
  return { outcome: outcome === DUPLICATE_EVENT ? unchanged(DUPLICATE_EVENT) : outcome, orderId };
}
