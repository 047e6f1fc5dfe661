// payment_intent.payment_failed (docs/contract.md#payment-life). The cart is restored before the write, so the one
// write can say whether it came back (docs/decisions.md#d28).
import type { PaymentIntentFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { paymentFailedNote, shopNotes } from '@/lib/orders/notes';
import { applyFact, isHoldStatus } from '@/lib/orders/payment-state';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { restoreCartAfterFailure } from '@/lib/webhooks/card/customer-cart';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { applyTransition } from '@/lib/webhooks/card/transition';

export type PaymentFailedOutcome = Changed<'payment_failure_recorded'> | Unchanged<'not_pending' | 'stale_failure' | typeof DUPLICATE_EVENT>;

/** A newer attempt is under way or done: the failure event is history. */
const MOVED_ON: ReadonlySet<string> = new Set(['processing', 'requires_capture', 'succeeded']);

export const paymentFailed = cardEventHandler({
  kind: 'payment_intent',
  setting: 'spec',
  apply: (orderId, event, services) => applyPaymentFailed(orderId, event, event.intent, services),
});

export async function applyPaymentFailed(
  orderId: number,
  event: { id: string; created: number },
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentFailedOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  const state = currentPaymentState(order);
  // A debit the facts hold as on its way: its failure is recorded whatever status the order has now.
  const debitOnItsWay = state.attempt?.kind === 'processing' && state.attempt.intentId === intent.intentId && !state.paid;
  if (order.status !== ORDER_STATUS.pending && !debitOnItsWay) return unchanged('not_pending');
  const fact = { kind: 'failed' as const, at: event.created, intentId: intent.intentId, chargeId: intent.chargeId, eventId: event.id };
  const preview = applyFact(state, fact).outcome;
  if (preview === 'duplicate') return unchanged(DUPLICATE_EVENT);
  if (preview === 'stale') return unchanged('stale_failure');
  if (debitOnItsWay) {
    // The event's snapshot may be older than the debit the order holds. Stripe's intent says now.
    const current = await (await services.card()).retrievePaymentIntent(intent.intentId);
    if (current && MOVED_ON.has(current.status)) return unchanged('stale_failure');
  }
  // The shop moved the order on while the debit was on its way: it must know the order is not paid.
  const movedOn = order.status !== ORDER_STATUS.pending && !isHoldStatus(order.status);

  const restored = order.customer_id > 0 && (await restoreCartAfterFailure(store, order.customer_id, orderId, event.id));
  const recorded = await applyTransition(order, fact, services, () => ({
    shopNote: movedOn ? shopNotes.debitFailed(intent.intentId, order.status) : undefined,
    customerNote: paymentFailedNote(intent.errorMessage, restored),
    meta: {
      [META.paymentFailedAt]: new Date().toISOString(),
      [META.paymentError]: intent.errorMessage,
      [META.cartRestoredOnFailure]: restored ? 'yes' : 'no',
    },
    metaMode: 'append',
  }));
  return recorded.outcome === 'applied' ? changed('payment_failure_recorded') : unchanged(DUPLICATE_EVENT);
}
