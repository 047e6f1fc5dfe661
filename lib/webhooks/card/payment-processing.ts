// payment_intent.processing (docs/contract.md#payment-life): a delayed debit holds a pending order.
import { META } from '@/lib/orders/meta-keys';
import { PAYMENT_PROCESSING_NOTE } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import { isHoldStatus } from '@/lib/orders/payment-state';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import type { PaymentIntentFacts } from '@/lib/card/events';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { applyTransition } from '@/lib/webhooks/card/transition';

export type PaymentProcessingOutcome = Changed<'payment_processing_on_hold'> | Unchanged<'not_pending' | typeof DUPLICATE_EVENT>;

export async function holdForDelayedPayment(
  orderId: number,
  event: { id: string; created: number },
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentProcessingOutcome> {
  const order = await services.store().getOrder(orderId);
  // Pending, or held by the model already (a review may come first): the debit's hold joins the others.
  if ((order.status !== ORDER_STATUS.pending && !isHoldStatus(order.status)) || isPaid(order)) return unchanged('not_pending');
  const held = await applyTransition(
    order,
    { kind: 'processing', at: event.created, intentId: intent.intentId, chargeId: intent.chargeId },
    services,
    () => ({ customerNote: PAYMENT_PROCESSING_NOTE, meta: { [META.paymentProcessingAt]: new Date().toISOString() }, metaMode: 'append' }),
  );
  if (held.outcome === 'duplicate') return unchanged(DUPLICATE_EVENT);
  return held.outcome === 'applied' ? changed('payment_processing_on_hold') : unchanged('not_pending');
}

export const paymentProcessing = cardEventHandler({
  kind: 'payment_intent',
  setting: 'async',
  apply: (orderId, event, services) => holdForDelayedPayment(orderId, event, event.intent, services),
});
