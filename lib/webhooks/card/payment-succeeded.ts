/**
 * `payment_intent.succeeded` (docs/contract.md#spec-4-3, docs/contract.md#spec-3): the card provider says the
 * customer paid. The order becomes `processing` with the payment recorded, or
 * `on-hold` when the amount paid is not what the order asked for.
 *
 * Amounts are compared in the currency's minor units (docs/decisions.md#d7) against
 * `charge_cents`, the amount the intent was created for. A payment in another
 * currency than the order's is a mismatch too: its amount is not the total.
 *
 * The paid date (docs/decisions.md#d14), in the same single write: WooCommerce's REST
 * schema marks `date_paid`/`date_paid_gmt` read-only, so the controller drops
 * them (they are still sent, as the spec says). WooCommerce stamps the date
 * itself (WC_Order::maybe_set_date_paid) only when the status becomes the
 * payment-complete status, which is `completed`, not `processing`, for an
 * order of virtual downloadable items only: such an order would stay
 * `processing` with no paid date. So the meta key `_date_paid` (Unix seconds)
 * is sent too: it is an internal key of the order data store, and
 * WC_Data::update_meta_data hands an internal key with a setter to that setter
 * (`set_date_paid`), before the controller applies the status ("later so
 * transitions have new data"); maybe_set_date_paid then finds the date set and
 * keeps it. (WooCommerce logs a "doing it wrong" notice for this in debug mode.)
 * `_paid_date` is kept because the spec names it, though WooCommerce hides it.
 *
 * A captured authorization (STRIPE_CAPTURE other than automatic) is recorded
 * the same way. The order is then `on-hold` (authorized, payment-authorized.ts),
 * or already `shipped` when the shipping webhook captured it: a shipped
 * order whose `_payment_authorized_at` has no `_provider_payment_intent_id` beside it still
 * gets its payment, and keeps its status.
 *
 * Superseded state (docs/decisions.md#d13): a manual submission's
 * `_manual_payment_status` becomes `superseded`, and a note the service left
 * for a failure or a manual submission is replaced by a payment-received note.
 * Appended meta without an id replaces WooCommerce's entry with the same key.
 *
 * Exactly once (exactly-once.ts): both writes, paid and on hold, carry the
 * event's receipt. A paid order stops a second success by its status alone; an
 * order on hold for a mismatch is not paid, so its receipt is what stops the
 * same event from writing it again. The cart is cleared only by the delivery
 * that wrote the payment: a redelivery after the answer to that write was lost
 * finds the order paid and clears nothing, since by then the cart may hold
 * what the customer added after paying; a cart left full is the lesser harm.
 */
import { paymentMethodTitle } from '@/lib/card/payment-methods';
import { InvalidCardEventError } from '@/lib/errors';
import { log } from '@/lib/log';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { metaValue, normalizeOrder } from '@/lib/orders/normalize';
import { AMOUNT_MISMATCH_NOTE, isSupersededByPayment, PAYMENT_RECEIVED_NOTE } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';
import { clearCartAfterPayment } from '@/lib/webhooks/card/customer-cart';
import { reportDuplicatePayment } from '@/lib/webhooks/card/duplicate-payment';
import type { PaymentIntentFacts } from '@/lib/card/events';
import { hasReceipt } from '@/lib/orders/receipts';
import { DUPLICATE_EVENT } from '@/lib/webhooks/card/exactly-once';
import { cardEventHandler, changed, unchanged, type Changed, type Unchanged } from '@/lib/webhooks/card/handler';
import { awaitsCapturedPayment } from '@/lib/webhooks/card/payment-authorized';

export type PaymentSucceededOutcome = Changed<'paid' | 'amount_mismatch_on_hold'> | Unchanged<'already_paid' | typeof DUPLICATE_EVENT>;

export const paymentSucceeded = cardEventHandler({
  kind: 'payment_intent',
  setting: 'spec',
  apply: (orderId, event, services) => applyPaymentSucceeded(orderId, event.id, event.intent, services),
});

export async function applyPaymentSucceeded(
  orderId: number,
  eventId: string,
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentSucceededOutcome> {
  const paidAmount = intent.amount;
  // Checked before any store call: without the amount, nothing can be decided.
  if (paidAmount === undefined) throw new InvalidCardEventError('Webhook Error: payment intent has no amount');

  const store = services.store();
  const order = await store.getOrder(orderId);
  // An authorization captured at shipping: the order is shipped (a status that counts as paid)
  // before this event records the payment, which it still must.
  const capturedAuthorization = awaitsCapturedPayment(order);
  if (isPaid(order) && !capturedAuthorization) {
    reportDuplicatePayment(orderId, order, intent);
    return unchanged('already_paid');
  }
  if (hasReceipt(order, eventId)) return unchanged(DUPLICATE_EVENT);

  const normalized = normalizeOrder(order);
  const sameCurrency = intent.currency === undefined || intent.currency === normalized.currency.toLowerCase();
  if (!sameCurrency || paidAmount !== normalized.charge_cents) {
    log.warn('card_webhook.amount_mismatch', {
      orderId,
      currency: normalized.currency,
      paidCurrency: intent.currency,
      paidAmount,
      expectedAmount: normalized.charge_cents,
    });
    await store.updateOrder(orderId, buildOrderUpdate(order, { status: ORDER_STATUS.onHold, customerNote: AMOUNT_MISMATCH_NOTE, receipt: eventId }));
    return changed('amount_mismatch_on_hold');
  }

  const paidAt = new Date();
  const now = paidAt.toISOString();
  const { cardId } = services.config.paymentMethods;
  const methodTitle = paymentMethodTitle(intent.paymentMethodType, services.config.paymentMethods.cardTitle);
  const meta: Record<string, string> = {
    [META.providerPaymentIntentId]: intent.intentId,
    [META.providerChargeId]: intent.chargeId,
    [META.paidDate]: now,
    [META.paymentMethod]: cardId,
    [META.paymentMethodTitle]: methodTitle,
    [META.transactionId]: intent.chargeId,
    [META.datePaidInternal]: String(Math.floor(paidAt.getTime() / 1000)),
  };
  if (metaValue(order, META.manualPaymentStatus) !== undefined) meta[META.manualPaymentStatus] = 'superseded';
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      // An order shipped with its capture keeps its status; every other one becomes processing, as the spec says.
      ...(capturedAuthorization && isPaid(order) ? {} : { status: ORDER_STATUS.processing }),
      ...(isSupersededByPayment(order.customer_note) ? { customerNote: PAYMENT_RECEIVED_NOTE } : {}),
      meta,
      metaMode: 'append',
      paymentMethod: { id: cardId, title: methodTitle, transactionId: intent.chargeId },
      datePaid: now,
      customerId: order.customer_id,
      receipt: eventId,
    }),
  );

  if (order.customer_id > 0) await clearCartAfterPayment(store, order.customer_id, orderId);
  return changed('paid');
}
