/**
 * `payment_intent.succeeded` (spec 4.3, spec 3): the card provider says the
 * customer paid. The order becomes `processing` with the payment recorded, or
 * `on-hold` when the amount paid is not what the order asked for.
 *
 * Amounts are compared in the currency's minor units (DECISIONS 7) against
 * `charge_cents`, the amount the intent was created for. A payment in another
 * currency than the order's is a mismatch too: its amount is not the total.
 */
import { log } from '@/lib/log';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { normalizeOrder } from '@/lib/orders/normalize';
import { AMOUNT_MISMATCH_NOTE } from '@/lib/orders/notes';
import { isPaid } from '@/lib/orders/payable';
import type { Services } from '@/lib/services';
import { clearCartAfterPayment } from '@/lib/webhooks/card/customer-cart';
import { reportDuplicatePayment } from '@/lib/webhooks/card/duplicate-payment';
import { InvalidCardEventError, type PaymentIntentFacts } from '@/lib/webhooks/card/event';

export type PaymentSucceededOutcome = 'paid' | 'amount_mismatch_on_hold' | 'already_paid';

export async function applyPaymentSucceeded(
  orderId: number,
  intent: PaymentIntentFacts,
  services: Services,
): Promise<PaymentSucceededOutcome> {
  const paidAmount = intent.amount;
  // Checked before any store call: without the amount, nothing can be decided.
  if (paidAmount === undefined) throw new InvalidCardEventError('Webhook Error: payment intent has no amount');

  const store = services.store();
  const order = await store.getOrder(orderId);
  if (isPaid(order)) {
    reportDuplicatePayment(orderId, order, intent);
    return 'already_paid';
  }

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
    await store.updateOrder(orderId, buildOrderUpdate(order, { status: 'on-hold', customerNote: AMOUNT_MISMATCH_NOTE }));
    return 'amount_mismatch_on_hold';
  }

  const now = new Date().toISOString();
  const { cardId, cardTitle } = services.config.paymentMethods;
  await store.updateOrder(
    orderId,
    buildOrderUpdate(order, {
      status: 'processing',
      meta: {
        _provider_payment_intent_id: intent.intentId,
        _provider_charge_id: intent.chargeId,
        _paid_date: now,
        _payment_method: cardId,
        _payment_method_title: cardTitle,
        _transaction_id: intent.chargeId,
      },
      metaMode: 'append',
      paymentMethod: { id: cardId, title: cardTitle, transactionId: intent.chargeId },
      datePaid: now,
      customerId: order.customer_id,
    }),
  );

  if (order.customer_id > 0) await clearCartAfterPayment(store, order.customer_id, orderId);
  return 'paid';
}
