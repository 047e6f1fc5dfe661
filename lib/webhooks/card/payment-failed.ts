/**
 * `payment_intent.payment_failed` (spec 4.3, spec 3): the customer's payment
 * did not go through. A pending order keeps its status (it is not cancelled)
 * and records the failure; a registered customer gets the cart back first so
 * the note can say so. An order in any other status is left alone, except,
 * with CARD_LIFECYCLE_EVENTS=async, an order on hold for a delayed payment
 * (payment-processing.ts), which goes back to pending with the same record.
 */
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { paymentFailedNote } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { restoreCartAfterFailure } from '@/lib/webhooks/card/customer-cart';
import type { PaymentIntentFacts } from '@/lib/card/events';
import { cardEventHandler } from '@/lib/webhooks/card/handler';
import { awaitsDelayedPayment } from '@/lib/webhooks/card/payment-processing';

export type PaymentFailedOutcome = 'payment_failure_recorded' | 'not_pending';

export const paymentFailed = cardEventHandler({
  kind: 'payment_intent',
  setting: 'spec',
  apply: (orderId, event, services) => applyPaymentFailed(orderId, event.intent, services),
});

export async function applyPaymentFailed(
  orderId: number,
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentFailedOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  // CARD_LIFECYCLE_EVENTS=async: a delayed payment that failed returns its on-hold order to pending.
  const delayed = services.config.lifecycleEvents.has('async') && awaitsDelayedPayment(order);
  if (order.status !== 'pending' && !delayed) return 'not_pending';

  const restored = order.customer_id > 0 && (await restoreCartAfterFailure(store, order.customer_id, orderId));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      ...(delayed ? { status: 'pending' } : {}),
      customerNote: paymentFailedNote(intent.errorMessage, restored),
      meta: {
        [META.paymentFailedAt]: new Date().toISOString(),
        [META.paymentError]: intent.errorMessage,
        [META.cartRestoredOnFailure]: restored ? 'yes' : 'no',
      },
      metaMode: 'append',
    }),
  );
  return 'payment_failure_recorded';
}
