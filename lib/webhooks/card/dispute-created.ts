/**
 * `charge.dispute.created` (CARD_LIFECYCLE_EVENTS=disputes): a cardholder's
 * chargeback. The order goes `on-hold`, remembering the status it had
 * (`_status_before_dispute`) and the dispute (`_dispute_id`), with a private
 * note for the shop (not a customer note: the customer is not told).
 *
 * On an order whose payment is not recorded yet: 400, for Stripe to retry. The
 * same dispute under another event id changes nothing. The note is written
 * before the status: a failed status write is retried and may repeat the
 * note, but never loses it.
 */
import type { DisputeFacts } from '@/lib/card/events';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import { shopNotes } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import { disputeAmount, ON_HOLD } from '@/lib/webhooks/card/dispute';
import { concernsOtherPayment, OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { cardEventHandler, CardEventTooEarlyError } from '@/lib/webhooks/card/handler';

export async function openDispute(orderId: number, dispute: DisputeFacts, services: Services): Promise<string> {
  const store = services.store();
  const order = await store.getOrder(orderId);
  if (metaValue(order, META.disputeId) === dispute.disputeId) return 'dispute_already_recorded';
  if (!isPaid(order)) throw new CardEventTooEarlyError('Webhook Error: the order is not paid yet; the dispute is recorded once the payment is');
  if (concernsOtherPayment(orderId, order, dispute, 'dispute')) return OTHER_PAYMENT;

  await store.addPrivateNote(orderId, shopNotes.disputeOpened(dispute.disputeId, dispute.reason, disputeAmount(dispute), order.status));
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      status: ON_HOLD,
      meta: { [META.disputeId]: dispute.disputeId, [META.statusBeforeDispute]: order.status, [META.disputeStatus]: dispute.status },
      metaMode: 'append',
    }),
  );
  return 'dispute_on_hold';
}

export const disputeCreated = cardEventHandler({
  kind: 'dispute',
  setting: 'disputes',
  apply: (orderId, event, services) => openDispute(orderId, event.dispute, services),
});

