// A card event applied to its order, for the webhook and payment reconciliation alike. Each handled type is one row of
// HANDLERS: the object it carries (lib/card/events.ts reads it), the setting that turns it on, its handler. A type not
// handled or switched off has no effect (docs/decisions.md#d24). Exactly once: docs/decisions.md#d12.
import { shopOrderId, type CardEvent, type CardEventKind, type CardEventOf } from '@/lib/card/events';
import type { Config, LifecycleEventSetting } from '@/lib/config';
import { InvalidCardEventError } from '@/lib/errors';
import type { RequestContext } from '@/lib/log';
import type { Services } from '@/lib/services';
import { chargeRefunded, fraudWarningCreated, noteDisputeFunds, recordDispute, recordReview } from '@/lib/card-payments/after-payment';
import { refundUpdated } from '@/lib/card-payments/after-payment';
import { paymentAuthorized, paymentCanceled, paymentFailed, paymentProcessing, paymentSucceeded } from '@/lib/card-payments/payment';
import { DUPLICATE_EVENT, unchanged, type CardOutcome } from '@/lib/card-payments/transition';

/** `manual_capture`: on when STRIPE_CAPTURE is not `automatic` (the intents are created for manual capture). */
type Setting = 'spec' | 'manual_capture' | LifecycleEventSetting;

type Apply<E> = (orderId: number, event: E, services: Services) => Promise<CardOutcome>;

function on<K extends CardEventKind>(kind: K, setting: Setting, apply: Apply<CardEventOf<K>>) {
  return { kind, setting, apply: apply as Apply<CardEvent> };
}

type Handler = ReturnType<typeof on>;

const HANDLERS: Readonly<Record<string, Handler>> = {
  'payment_intent.succeeded': on('payment_intent', 'spec', paymentSucceeded),
  'payment_intent.payment_failed': on('payment_intent', 'spec', paymentFailed),
  'payment_intent.processing': on('payment_intent', 'async', paymentProcessing),
  'payment_intent.amount_capturable_updated': on('payment_intent', 'manual_capture', paymentAuthorized),
  'payment_intent.canceled': on('payment_intent', 'manual_capture', paymentCanceled),
  'charge.refunded': on('charge', 'refunds', chargeRefunded),
  'charge.refund.updated': on('refund', 'refunds', refundUpdated),
  'refund.updated': on('refund', 'refunds', refundUpdated),
  'charge.dispute.created': on('dispute', 'disputes', recordDispute(false)),
  'charge.dispute.closed': on('dispute', 'disputes', recordDispute(true)),
  'charge.dispute.funds_withdrawn': on('dispute', 'disputes', noteDisputeFunds('withdrawn')),
  'charge.dispute.funds_reinstated': on('dispute', 'disputes', noteDisputeFunds('reinstated')),
  'review.opened': on('review', 'reviews', recordReview(true)),
  'review.closed': on('review', 'reviews', recordReview(false)),
  'radar.early_fraud_warning.created': on('fraud_warning', 'reviews', fraudWarningCreated),
};

/** Every type the service can handle, whatever its settings (scripts/send-event.ts). */
export const CARD_EVENT_TYPES: readonly string[] = Object.keys(HANDLERS);

type HandlerSettings = Pick<Config, 'lifecycleEvents'> & Partial<Pick<Config, 'capture'>>;

function handlerFor(type: string, config: HandlerSettings): Handler | undefined {
  const handler = Object.hasOwn(HANDLERS, type) ? HANDLERS[type] : undefined;
  if (handler === undefined || handler.setting === 'spec') return handler;
  if (handler.setting === 'manual_capture') return (config.capture ?? 'automatic') !== 'automatic' ? handler : undefined;
  return config.lifecycleEvents.has(handler.setting) ? handler : undefined;
}

/** What reconciliation asks the provider for, and what the webhook setup subscribes. */
export function handledEventTypes(config: HandlerSettings): string[] {
  return CARD_EVENT_TYPES.filter((type) => handlerFor(type, config) !== undefined);
}

// The receipt on the order is the proof, the remembered id the fast path, written only after the change and before the
// lock is released.
export function processedEventKey(eventId: string): string {
  return `cardprovider:${eventId}`;
}

export async function applyEventOnce<Outcome>(
  services: Pick<Services, 'cardEventLocks' | 'processedEvents'>,
  orderId: number,
  eventId: string,
  apply: () => Promise<Outcome>,
): Promise<Outcome | typeof DUPLICATE_EVENT> {
  const key = processedEventKey(eventId);
  const locks = services.cardEventLocks;
  if (locks.withEventLock) {
    // Redis: the check rides in the lock's round trip, the remembering in the release's.
    const done = await locks.withEventLock(orderId, key, async () => ({ result: await apply(), remember: true }));
    return done.duplicate ? DUPLICATE_EVENT : done.result;
  }
  return locks.withOrderLock(orderId, async () => {
    if (await services.processedEvents.has(key)) return DUPLICATE_EVENT;
    const outcome = await apply();
    await services.processedEvents.remember(key);
    return outcome;
  });
}

/** Which order an event is about: its payment intent's `metadata.shop_order_id`, read from the event or retrieved. */
function orderLinkOf(event: CardEvent): { orderId: number | undefined } | { intentId: string } {
  if (event.kind === 'payment_intent') return { orderId: event.intent.orderId };
  if (event.kind === 'unreadable' || event.kind === 'other') return { orderId: undefined };
  const link =
    event.kind === 'charge' ? event.charge
    : event.kind === 'refund' ? event.refund
    : event.kind === 'dispute' ? event.dispute
    : event.kind === 'review' ? event.review
    : event.warning;
  return link.orderId !== undefined || link.intentId === undefined ? { orderId: link.orderId } : { intentId: link.intentId };
}

/** The order id goes into `context` before the store is touched, so a failure's log line names it. */
export async function applyCardEvent(
  event: CardEvent,
  services: Services,
  context: Pick<RequestContext, 'orderId'> = {},
): Promise<{ outcome: CardOutcome; orderId: number | undefined }> {
  const handler = handlerFor(event.type, services.config);
  if (!handler) return { outcome: unchanged('ignored_event_type'), orderId: undefined };
  if (event.kind === 'unreadable') throw new InvalidCardEventError(event.problem);
  if (event.kind !== handler.kind) throw new InvalidCardEventError('Webhook Error: event does not carry its object');

  // An event applied already costs no provider call to find its order again (redeliveries of refunds and
  // disputes); the check under the order's lock (applyEventOnce) stays the one that decides.
  const link = orderLinkOf(event);
  if (!('orderId' in link) && (await services.processedEvents.has(processedEventKey(event.id)))) {
    return { outcome: unchanged(DUPLICATE_EVENT), orderId: undefined };
  }
  const intent = 'orderId' in link ? undefined : await (await services.card()).retrievePaymentIntent(link.intentId);
  const orderId = 'orderId' in link ? link.orderId : intent && shopOrderId({ shop_order_id: intent.orderId });
  if (orderId === undefined) return { outcome: unchanged('no_order_id'), orderId: undefined };
  context.orderId = orderId;
  const outcome = await applyEventOnce(services, orderId, event.id, () => handler.apply(orderId, event, services));
  return { outcome: outcome === DUPLICATE_EVENT ? unchanged(DUPLICATE_EVENT) : outcome, orderId };
}
