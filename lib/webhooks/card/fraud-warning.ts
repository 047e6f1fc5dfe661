// radar.early_fraud_warning.created: a private note with Stripe's advice, its own record; the status is the shop's to change.
import { shopNotes } from '@/lib/orders/notes';
import { currentPaymentState } from '@/lib/orders/order-payment';
import { OTHER_PAYMENT } from '@/lib/webhooks/card/duplicate-payment';
import { cardEventHandler, changed, unchanged } from '@/lib/webhooks/card/handler';
import { addShopNoteOnce } from '@/lib/orders/shop-note';
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
