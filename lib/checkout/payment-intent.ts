/**
 * POST /api/payment-intent (spec 4.1): create a card payment intent for a
 * pending order, or reuse the one stored on it, and write the customer's
 * addresses, all under the order's lock so concurrent calls create one intent.
 *
 * Upstream calls for a new intent with addresses: get order, create intent,
 * one order update carrying both the intent id and the addresses. WooCommerce
 * recalculates taxes when addresses change (DECISIONS 7), so the intent's
 * amount is then brought to the total that update returned.
 */
import { createHash } from 'node:crypto';
import type { PaymentIntentSummary } from '@/lib/card/stripe';
import { checkoutAddressChange } from '@/lib/checkout/addresses';
import { loadPayableOrder, orderIdFromToken } from '@/lib/checkout/load-payable-order';
import type { PaymentIntentRequest } from '@/lib/checkout/schemas';
import type { RequestContext } from '@/lib/http/route';
import { log } from '@/lib/log';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { META } from '@/lib/orders/meta-keys';
import { normalizeOrder } from '@/lib/orders/normalize';
import type { Services } from '@/lib/services';


export interface PaymentIntentResponse {
  success: true;
  client_secret: string;
  payment_intent_id: string;
}

/**
 * Stripe idempotency key for creating an order's intent: the same order,
 * amount, currency and email always give the same key, so a retry after a
 * failed order update (or a second instance racing this one) gets the intent
 * already created instead of a second one.
 */
export function intentIdempotencyKey(parts: {
  orderId: number;
  amount: number;
  currency: string;
  email: string | undefined;
  replaces: string | undefined;
}): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([parts.orderId, parts.amount, parts.currency.toLowerCase(), parts.email ?? '', parts.replaces ?? '']))
    .digest('hex')
    .slice(0, 32);
  return `checkout-order-${parts.orderId}-${digest}`;
}

export type ReuseRefusal = 'missing' | 'canceled' | 'other_order' | 'other_currency';

/**
 * Why a stored intent may not be handed out again, or undefined when it may
 * (DECISIONS 13): it must exist, not be canceled (it could never be paid),
 * name this order in `metadata.shop_order_id` and be in the order's currency.
 */
export function reuseRefusal(
  intent: PaymentIntentSummary | undefined,
  orderId: number,
  orderCurrency: string,
): ReuseRefusal | undefined {
  if (intent === undefined) return 'missing';
  if (intent.orderId !== String(orderId)) return 'other_order';
  if (intent.currency.toLowerCase() !== orderCurrency.toLowerCase()) return 'other_currency';
  if (intent.status === 'canceled') return 'canceled';
  return undefined;
}

export async function preparePaymentIntent(
  input: PaymentIntentRequest,
  services: Services,
  context: RequestContext,
): Promise<PaymentIntentResponse> {
  const orderId = await orderIdFromToken(input.token, services, context);
  const card = await services.card();
  const store = services.store();

  return services.orderLocks.withOrderLock(orderId, async () => {
    const { order, normalized } = await loadPayableOrder(orderId, services);

    let intent: PaymentIntentSummary | undefined;
    let replaces: string | undefined;
    if (normalized.payment_intent_id) {
      intent = await card.retrievePaymentIntent(normalized.payment_intent_id);
      const refusal = reuseRefusal(intent, orderId, normalized.currency);
      if (refusal !== undefined) {
        const mismatch = refusal === 'other_order' || refusal === 'other_currency';
        // A stored id naming another order's intent is a copied or stale meta value: never hand out its client secret.
        log[mismatch ? 'error' : 'warn']('payment_intent.replaced', {
          orderId,
          reason: refusal,
          intentOrderId: refusal === 'other_order' ? String(intent?.orderId ?? '').slice(0, 20) || undefined : undefined,
          intentCurrency: refusal === 'other_currency' ? intent?.currency : undefined,
        });
        // The replaced id goes into the idempotency key, so the new key can never be the one that produced it.
        replaces = normalized.payment_intent_id;
        intent = undefined;
      }
    }

    const created = intent === undefined;
    if (intent === undefined) {
      const email = input.contact_info?.email || input.billing_address?.email || normalized.email;
      intent = await card.createPaymentIntent({
        orderId,
        amount: normalized.charge_cents,
        currency: normalized.currency,
        email,
        idempotencyKey: intentIdempotencyKey({
          orderId,
          amount: normalized.charge_cents,
          currency: normalized.currency,
          email,
          replaces,
        }),
      });
    }

    let amountDue = normalized.charge_cents;
    const addresses = checkoutAddressChange(input, { shippingFallsBackToBilling: false });
    if (created || addresses) {
      const meta: Record<string, string> = {};
      if (created) meta[META.paymentIntentId] = intent.id;
      if (addresses) meta[META.checkoutAddressUpdated] = new Date().toISOString();
      const updated = await store.updateOrder(
        orderId,
        buildOrderUpdate(order, { ...addresses, meta, metaMode: 'replace' }),
      );
      amountDue = normalizeOrder(updated).charge_cents;
    }

    if (intent.amount !== amountDue) {
      if (intent.status === 'requires_payment_method') {
        intent = await card.updatePaymentIntentAmount(intent.id, amountDue, orderId);
      } else {
        // Spec 4.1 step 8: reused unchanged; the webhook will put a mismatched payment on hold.
        log.warn('payment_intent.amount_differs', { orderId, intentAmount: intent.amount, amountDue, intentStatus: intent.status });
      }
    }

    context.outcome = created ? 'intent_created' : 'intent_reused';
    return { success: true, client_secret: intent.clientSecret, payment_intent_id: intent.id };
  });
}
