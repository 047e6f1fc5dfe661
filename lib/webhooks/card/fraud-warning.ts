/**
 * `radar.early_fraud_warning.created` (CARD_LIFECYCLE_EVENTS=reviews): the
 * card issuer reported the charge as likely fraud, usually days before the
 * cardholder disputes it. A private note tells the shop what Stripe
 * recommends: refund while the warning is actionable (a refunded charge
 * cannot be disputed, and a dispute costs a fee), and not ship meanwhile. The
 * status is left alone: the shop decides. The note is the whole effect and
 * its own record (shop-note.ts): written once.
 */
import { shopNotes } from '@/lib/orders/notes';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { cardEventHandler, changed, unchanged } from '@/lib/webhooks/card/handler';
import { addShopNoteOnce } from '@/lib/webhooks/card/shop-note';
import { isOtherPayment } from '@/lib/webhooks/card/transition';

export const fraudWarningCreated = cardEventHandler({
  kind: 'fraud_warning',
  setting: 'reviews',
  async apply(orderId, event, services) {
    const store = services.store();
    const { warning } = event;
    const order = await store.getOrder(orderId);
    if (isOtherPayment(order, currentPaymentState(order), warning, 'fraud warning')) return unchanged(OTHER_PAYMENT);
    const note = shopNotes.earlyFraudWarning(warning.warningId, warning.chargeId, warning.fraudType, warning.actionable);
    return (await addShopNoteOnce(store, orderId, note)) ? changed('fraud_warning_noted') : unchanged('fraud_warning_already_noted');
  },
});
