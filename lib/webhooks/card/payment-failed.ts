/**
 * `payment_intent.payment_failed` (spec 4.3, spec 3): the customer's payment
 * did not go through. A pending order keeps its status (it is not cancelled)
 * and records the failure; a registered customer gets the cart back first so
 * the note can say so. An order in any other status is left alone.
 */
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { paymentFailedNote } from '@/lib/orders/notes';
import type { Services } from '@/lib/services';
import { restoreCartAfterFailure } from '@/lib/webhooks/card/customer-cart';
import type { PaymentIntentFacts } from '@/lib/webhooks/card/event';

export type PaymentFailedOutcome = 'payment_failure_recorded' | 'not_pending';

export async function applyPaymentFailed(
  orderId: number,
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentFailedOutcome> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (order.status !== 'pending') return 'not_pending';

  const restored = order.customer_id > 0 && (await restoreCartAfterFailure(store, order.customer_id, orderId));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      customerNote: paymentFailedNote(intent.errorMessage, restored),
      meta: {
        _payment_failed_at: new Date().toISOString(),
        _payment_error: intent.errorMessage,
        _cart_restored_on_failure: restored ? 'yes' : 'no',
      },
      metaMode: 'append',
    }),
  );
  return 'payment_failure_recorded';
}
