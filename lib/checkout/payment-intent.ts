/**
 * POST /api/payment-intent (docs/contract.md#spec-4-1): create a card payment intent for a
 * pending order, or reuse the one stored on it, and write the customer's
 * addresses, all under the order's lock so concurrent calls create one intent.
 *
 * Upstream calls for a new intent with addresses: get order, create intent,
 * one order update carrying both the intent id and the addresses. WooCommerce
 * recalculates taxes when addresses change (docs/decisions.md#d7), so the intent's
 * amount is then brought to the total that update returned, and its receipt
 * email to the order's email, in one more call when either changed.
 * A registered customer's order adds a customer read, the intent's customer
 * in that update call, and a Customer Session (lib/checkout/saved-cards.ts).
 *
 * The lock is one guard; the idempotency key of the create is the other, for
 * when the lock is only this instance's (Redis down): two calls for one order
 * on two instances still create one intent and hand out one client secret.
 */
import { createHash } from 'node:crypto';
import type { CardProvider, IntentChanges, PaymentIntentSummary } from '@/lib/card/stripe';
import { checkoutAddressChange } from '@/lib/checkout/addresses';
import { stripeReceiptEmail } from '@/lib/checkout/email';
import { loadPayableOrder, orderIdFromToken } from '@/lib/checkout/load-payable-order';
import { stripeCustomerFor } from '@/lib/checkout/saved-cards';
import type { PaymentIntentRequest } from '@/lib/checkout/schemas';
import { CardProviderError } from '@/lib/errors';
import { log, type RequestContext } from '@/lib/log';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { META } from '@/lib/orders/meta-keys';
import { normalizeOrder, type NormalizedOrder } from '@/lib/orders/normalize';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';
import { MIN_ATTEMPT_MS, requestTimeLeftMs } from '@/lib/upstream/budget';

export interface PaymentIntentResponse {
  success: true;
  client_secret: string;
  payment_intent_id: string;
  /** A registered customer's Customer Session (saved cards in the Payment Element); absent for a guest. */
  customer_session_client_secret?: string;
}

/**
 * Stripe idempotency key for creating an order's intent. It depends only on
 * what every concurrent call for the order shares, never on one request's
 * body: the order, the amount and currency of the order as read, and the
 * intent it replaces (so a new key can never reproduce a replaced intent).
 * Two calls that race on two instances (Redis down) or a retry after a failed
 * order update send the same key with the same parameters (createIntent), and
 * Stripe answers both with one intent.
 */
export function intentIdempotencyKey(parts: {
  orderId: number;
  amount: number;
  currency: string;
  replaces: string | undefined;
}): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([parts.orderId, parts.amount, parts.currency.toLowerCase(), parts.replaces ?? '']))
    .digest('hex')
    .slice(0, 32);
  return `checkout-order-${parts.orderId}-${digest}`;
}

export type ReuseRefusal = 'missing' | 'canceled' | 'other_order' | 'other_currency';

/**
 * Why a stored intent may not be handed out again, or undefined when it may
 * (docs/decisions.md#d13): it must exist, not be canceled (it could never be paid),
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

/** The order as this call works on it: as read, or as read again after another call stored its intent. */
interface OrderState {
  order: StoreOrder;
  normalized: NormalizedOrder;
}

/** The intent stored on the order when it may be handed out again; otherwise the id it replaces, if any. */
async function storedIntent(card: CardProvider, orderId: number, state: OrderState): Promise<{ intent?: PaymentIntentSummary; replaces?: string }> {
  const storedId = state.normalized.payment_intent_id;
  if (!storedId) return {};
  const intent = await card.retrievePaymentIntent(storedId);
  const refusal = reuseRefusal(intent, orderId, state.normalized.currency);
  if (refusal === undefined) return { intent };
  const mismatch = refusal === 'other_order' || refusal === 'other_currency';
  // A stored id naming another order's intent is a copied or stale meta value: never hand out its client secret.
  log[mismatch ? 'error' : 'warn']('payment_intent.replaced', {
    orderId,
    reason: refusal,
    intentOrderId: refusal === 'other_order' ? String(intent?.orderId ?? '').slice(0, 20) || undefined : undefined,
    intentCurrency: refusal === 'other_currency' ? intent?.currency : undefined,
  });
  return { replaces: storedId };
}

/**
 * How Stripe refused a reused idempotency key: 409 Conflict while another
 * request with it is still running (the SDK names it StripeAPIError), 400
 * `idempotency_error` (StripeIdempotencyError) when it was used with other parameters.
 */
function keyRefusal(error: unknown): 'in_progress' | 'other_parameters' | undefined {
  if (!(error instanceof CardProviderError)) return undefined;
  if (error.status === 409) return 'in_progress';
  return error.type === 'StripeIdempotencyError' ? 'other_parameters' : undefined;
}

/** Pauses before asking again about a key whose first request is still running: a Stripe create takes about a second at most. */
const IN_PROGRESS_PAUSES_MS = [100, 250, 500, 1000];

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Creates the order's intent, or finds the one a concurrent call created.
 *
 * The parameters are those of the order as read, before this request writes
 * its addresses (docs/contract.md#spec-4-1: created with the order's email at step 9, the
 * addresses written at step 10), so every call that read the same order sends
 * the same parameters under the same key, whatever its body: Stripe refuses a
 * key reused with other parameters. The email a request brings reaches the
 * intent afterwards, by the update that follows the address write.
 *
 * Stripe may still refuse the key (`idempotency_error`):
 * - 409, another call's create with it is still running: that call may have
 *   stored its intent meanwhile (read the order again), otherwise the create is
 *   asked again after a pause, and answered with that call's intent once it is done;
 * - 400, the key was used with other parameters: an earlier create under this
 *   key whose intent was never stored (its order write failed), for an order
 *   whose email or the configured payment methods have changed since. Unless
 *   another call stored an intent meanwhile, a key that also names these
 *   parameters is used: calls that read the same order still share it.
 */
async function createIntent(
  services: Services,
  card: CardProvider,
  orderId: number,
  state: OrderState,
  replaces: string | undefined,
): Promise<{ intent: PaymentIntentSummary; created: boolean; state: OrderState }> {
  const { normalized } = state;
  const input = { orderId, amount: normalized.charge_cents, currency: normalized.currency, email: stripeReceiptEmail(normalized.email) };
  const orderKey = intentIdempotencyKey({ orderId, amount: input.amount, currency: input.currency, replaces });
  let key = orderKey;
  // The order as last read: the write that follows merges its meta into that.
  let latest = state;
  for (let conflicts = 0; ; conflicts += 1) {
    try {
      return { intent: await card.createPaymentIntent({ ...input, idempotencyKey: key }), created: true, state: latest };
    } catch (error) {
      const refusal = keyRefusal(error);
      if (refusal === undefined) throw error;
      log.warn('payment_intent.key_refused', { orderId, refusal, attempt: conflicts + 1 });
      latest = await loadPayableOrder(orderId, services);
      if (latest.normalized.payment_intent_id && latest.normalized.payment_intent_id !== replaces) {
        const other = await storedIntent(card, orderId, latest);
        if (other.intent) return { intent: other.intent, created: false, state: latest };
      }
      const wait = IN_PROGRESS_PAUSES_MS[conflicts];
      if (refusal === 'in_progress' && wait !== undefined && requestTimeLeftMs() - wait > MIN_ATTEMPT_MS) {
        await pause(wait);
        continue;
      }
      if (refusal === 'other_parameters' && key === orderKey) {
        key = `${orderKey}-${createHash('sha256').update(JSON.stringify(input)).digest('hex').slice(0, 16)}`;
        continue;
      }
      throw error;
    }
  }
}

/**
 * The order's Stripe Customer (lib/checkout/saved-cards.ts). Without a card to save, a failure only
 * hides saved cards: the payment goes on without them; with one, the customer asked, so it is the answer.
 */
async function orderStripeCustomer(services: Services, card: CardProvider, orderId: number, wooCustomerId: number, saveCard: boolean): Promise<string | undefined> {
  try {
    return await stripeCustomerFor(services, card, wooCustomerId, saveCard);
  } catch (error) {
    if (saveCard) throw error;
    log.warn('saved_cards.unavailable', { orderId, error: error instanceof Error ? error.name : 'unknown' });
    return undefined;
  }
}

/** The Customer Session's client secret, or undefined when Stripe refused it: the card form still works. */
async function customerSession(card: CardProvider, orderId: number, customerId: string): Promise<string | undefined> {
  try {
    return await card.customers.createCustomerSession(customerId);
  } catch (error) {
    log.warn('saved_cards.session_failed', { orderId, error: error instanceof Error ? error.name : 'unknown' });
    return undefined;
  }
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
    let state: OrderState = await loadPayableOrder(orderId, services);
    const saveCard = input.save_payment_method === true;
    const stripeCustomer = await orderStripeCustomer(services, card, orderId, state.order.customer_id, saveCard);

    const stored = await storedIntent(card, orderId, state);
    let intent = stored.intent;
    let created = false;
    if (intent === undefined) {
      ({ intent, created, state } = await createIntent(services, card, orderId, state, stored.replaces));
    }

    let due = { amount: state.normalized.charge_cents, email: stripeReceiptEmail(state.normalized.email) };
    const addresses = checkoutAddressChange(input, { shippingFallsBackToBilling: false });
    // A concurrent call may have stored this same intent already; writing its id again changes nothing.
    const storesIntent = state.normalized.payment_intent_id !== intent.id;
    if (storesIntent || addresses) {
      const meta: Record<string, string> = {};
      if (storesIntent) meta[META.paymentIntentId] = intent.id;
      if (addresses) meta[META.checkoutAddressUpdated] = new Date().toISOString();
      const updated = normalizeOrder(await store.updateOrder(orderId, buildOrderUpdate(state.order, { ...addresses, meta, metaMode: 'replace' })));
      due = { amount: updated.charge_cents, email: stripeReceiptEmail(updated.email) };
    }

    // The intent follows the order as written: WooCommerce recalculates taxes on an address write
    // (docs/decisions.md#d7), and the receipt goes to the email the customer just gave.
    const changes: IntentChanges = {};
    if (intent.amount !== due.amount) changes.amount = due.amount;
    if (due.email !== undefined && intent.receiptEmail !== due.email) changes.receiptEmail = due.email;
    if (stripeCustomer !== undefined) {
      // Saved cards are the customer's; the card is saved only when the customer asked (docs/decisions.md#d41).
      if (intent.customerId !== stripeCustomer) changes.customerId = stripeCustomer;
      const usage = saveCard ? 'off_session' : '';
      if ((intent.setupFutureUsage ?? '') !== usage) changes.setupFutureUsage = usage;
    }
    if (Object.keys(changes).length > 0) {
      if (intent.status === 'requires_payment_method') {
        intent = await card.updatePaymentIntent(intent.id, changes, orderId);
      } else if (changes.amount !== undefined) {
        // docs/contract.md#spec-4-1 step 8: reused unchanged; the webhook will put a mismatched payment on hold.
        log.warn('payment_intent.amount_differs', { orderId, intentAmount: intent.amount, amountDue: due.amount, intentStatus: intent.status });
      }
    }

    context.outcome = created ? 'intent_created' : 'intent_reused';
    const response: PaymentIntentResponse = { success: true, client_secret: intent.clientSecret, payment_intent_id: intent.id };
    // Saved cards pay only an intent of their customer: none is offered for an intent that could not take it.
    const session = stripeCustomer !== undefined && intent.customerId === stripeCustomer ? await customerSession(card, orderId, stripeCustomer) : undefined;
    if (session !== undefined) response.customer_session_client_secret = session;
    return response;
  });
}
