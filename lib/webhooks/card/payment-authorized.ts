// payment_intent.amount_capturable_updated (docs/decisions.md#d36): the authorization is a hold with its
// `capture_before`; `payment_intent.succeeded` records the payment once captured.
import type { PaymentIntentFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { paymentAuthorizedNote } from '@/lib/orders/notes';
import { applyFact } from '@/lib/orders/payment-state';
import { log } from '@/lib/log';
import { isPaid } from '@/lib/orders/payable';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { releaseAuthorization } from '@/lib/card-payments/authorization';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { applyTransition } from '@/lib/webhooks/card/transition';

export type PaymentAuthorizedOutcome =
  | Changed<'authorized_on_hold' | 'released_unpayable_order'>
  | Unchanged<'already_paid' | typeof DUPLICATE_EVENT>;

const NOT_HOLDING: ReadonlySet<string> = new Set([ORDER_STATUS.cancelled, ORDER_STATUS.failed, ORDER_STATUS.refunded]);

/** Undefined when Stripe cannot say now: the expiry cron reads it anyway. */
async function captureBeforeOf(chargeId: string, services: Services): Promise<number | undefined> {
  if (!chargeId) return undefined;
  try {
    return (await (await services.card()).retrieveCharge(chargeId))?.captureBefore;
  } catch (error) {
    log.warn('card.capture_before_unread', { chargeId, reason: error instanceof Error ? error.name : 'unknown' });
    return undefined;
  }
}

export async function recordAuthorization(
  orderId: number,
  event: { id: string; created: number },
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentAuthorizedOutcome> {
  const order = await services.store().getOrder(orderId);
  const fact = { kind: 'authorized' as const, at: event.created, intentId: intent.intentId, chargeId: intent.chargeId };
  const state = currentPaymentState(order);
  if (state.paid || isPaid(order)) return unchanged('already_paid');
  // An order that can no longer be paid holds no money: released at once.
  if (NOT_HOLDING.has(order.status)) {
    const released = { ...fact, released: true };
    if (applyFact(state, released).outcome !== 'applied') return unchanged(DUPLICATE_EVENT);
    await releaseAuthorization(order, intent.intentId, services, `authorized after the order was ${order.status}`);
    await applyTransition(order, released, services);
    return changed('released_unpayable_order');
  }
  if (applyFact(state, fact).outcome !== 'applied') return unchanged(DUPLICATE_EVENT);
  const captureBefore = await captureBeforeOf(intent.chargeId, services);
  const recorded = await applyTransition(order, { ...fact, captureBefore }, services, () => ({
    customerNote: paymentAuthorizedNote(services.config.capture),
    meta: { [META.paymentAuthorizedAt]: new Date().toISOString() },
    metaMode: 'append',
  }));
  return recorded.outcome === 'applied' ? changed('authorized_on_hold') : unchanged(DUPLICATE_EVENT);
}

export const paymentAuthorized = cardEventHandler({
  kind: 'payment_intent',
  setting: 'manual_capture',
  apply: (orderId, event, services) => recordAuthorization(orderId, event, event.intent, services),
});
