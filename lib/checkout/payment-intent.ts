/**
 * POST /api/payment-intent (docs/contract.md#spec-4-1): create or reuse the order's intent
 * (docs/decisions.md#d16) and write the addresses in one order update (docs/decisions.md#d17),
 * under the order's lock and an idempotency key that holds without it (docs/decisions.md#d18).
 */
import type { CardProvider, CreateIntentInput, IntentChanges, PaymentIntentSummary } from '@/lib/card/stripe';
import { checkoutAddressChange } from '@/lib/checkout/addresses';
import { stripeReceiptEmail } from '@/lib/checkout/email';
import { rerateExpressShipping } from '@/lib/checkout/express-rerate';
import { digestOf, loadPayableOrder, orderIdFromToken, pauseBeforeRetry, type PayableOrder } from '@/lib/checkout/load-payable-order';
import { stripeCustomerFor } from '@/lib/checkout/saved-cards';
import type { PaymentIntentRequest } from '@/lib/checkout/schemas';
import { CardProviderError } from '@/lib/errors';
import type { PaymentIntentResponse } from '@/lib/http/responses';
import { log, type RequestContext } from '@/lib/log';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { META } from '@/lib/orders/meta-keys';
import { normalizeOrder } from '@/lib/orders/normalize';
import type { Services } from '@/lib/services';

/** Only what every concurrent call for the order shares, never a request's body (docs/decisions.md#d18). */
export function intentIdempotencyKey(parts: Pick<CreateIntentInput, 'orderId' | 'amount' | 'currency'> & { replaces: string | undefined }) {
  const digest = digestOf([parts.orderId, parts.amount, parts.currency.toLowerCase(), parts.replaces ?? ''], 32);
  return `checkout-order-${parts.orderId}-${digest}`;
}

/** Why a stored intent may not be handed out again (docs/decisions.md#d16), or undefined when it may. */
export function reuseRefusal(intent: PaymentIntentSummary | undefined, orderId: number, orderCurrency: string) {
  if (intent === undefined) return 'missing';
  if (intent.orderId !== String(orderId)) return 'other_order';
  if (intent.currency.toLowerCase() !== orderCurrency.toLowerCase()) return 'other_currency';
  if (intent.status === 'canceled') return 'canceled';
  return undefined;
}

async function storedIntent(card: CardProvider, orderId: number, state: PayableOrder): Promise<{ intent?: PaymentIntentSummary; replaces?: string }> {
  const storedId = state.normalized.payment_intent_id;
  if (!storedId) return {};
  const intent = await card.retrievePaymentIntent(storedId);
  const refusal = reuseRefusal(intent, orderId, state.normalized.currency);
  if (refusal === undefined) return { intent };
  log[refusal === 'other_order' || refusal === 'other_currency' ? 'error' : 'warn']('payment_intent.replaced', {
    orderId,
    reason: refusal,
    intentOrderId: refusal === 'other_order' ? String(intent?.orderId ?? '').slice(0, 20) || undefined : undefined,
    intentCurrency: refusal === 'other_currency' ? intent?.currency : undefined,
  });
  return { replaces: storedId };
}

/** Stripe answers 409 (a StripeAPIError) while another request with the key runs. */
function keyRefusal(error: unknown) {
  if (!(error instanceof CardProviderError)) return undefined;
  if (error.status === 409) return 'in_progress';
  return error.type === 'StripeIdempotencyError' ? 'other_parameters' : undefined;
}

/**
 * Creates the order's intent with the order as read, so every call that read it sends the same
 * parameters under the same key, or finds the one a concurrent call created (docs/decisions.md#d18).
 */
async function createIntent(services: Services, card: CardProvider, orderId: number, state: PayableOrder, replaces: string | undefined) {
  const { normalized } = state;
  const input = { orderId, amount: normalized.charge_cents, currency: normalized.currency, email: stripeReceiptEmail(normalized.email) };
  const orderKey = intentIdempotencyKey({ orderId, amount: input.amount, currency: input.currency, replaces });
  let key = orderKey;
  let latest = state;
  for (let conflicts = 0; ; conflicts += 1) {
    try {
      return { intent: await card.createPaymentIntent({ ...input, idempotencyKey: key }), created: true, state: latest };
    } catch (error) {
      const refusal = keyRefusal(error);
      if (refusal === undefined) throw error;
      log.warn('payment_intent.key_refused', { orderId, refusal, attempt: conflicts + 1 });
      latest = await loadPayableOrder(orderId, services);
      // A concurrent call stored its intent meanwhile: that one is the order's.
      const other = latest.normalized.payment_intent_id === replaces ? {} : await storedIntent(card, orderId, latest);
      if (other.intent) return { intent: other.intent, created: false, state: latest };
      if (refusal === 'in_progress' && (await pauseBeforeRetry(conflicts))) continue;
      if (refusal === 'other_parameters' && key === orderKey) {
        key = `${orderKey}-${digestOf(input, 16)}`;
        continue;
      }
      throw error;
    }
  }
}

/** Changes an intent still awaiting its card; one being paid is reused unchanged (docs/decisions.md#d16). */
export async function updateUnpaidIntent(card: CardProvider, intent: PaymentIntentSummary, changes: IntentChanges, orderId: number) {
  if (Object.keys(changes).length === 0) return intent;
  if (intent.status === 'requires_payment_method') return card.updatePaymentIntent(intent.id, changes, orderId);
  // The card webhook puts a payment that differs from the order on hold.
  if (changes.amount !== undefined) {
    log.warn('payment_intent.amount_differs', { orderId, intentAmount: intent.amount, amountDue: changes.amount, intentStatus: intent.status });
  }
  return intent;
}

/** A failure that only hides saved cards: logged by name, and the payment goes on without them. */
async function orWarn<T>(event: string, orderId: number, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    log.warn(event, { orderId, error: error instanceof Error ? error.name : 'unknown' });
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
    let state: PayableOrder = await loadPayableOrder(orderId, services);
    const saveCard = input.save_payment_method === true;
    // With a card to save, the customer asked for it, so a failure fails the call.
    const stripeCustomer = saveCard
      ? await stripeCustomerFor(services, card, state.order.customer_id, true)
      : await orWarn('saved_cards.unavailable', orderId, () => stripeCustomerFor(services, card, state.order.customer_id, false));

    const stored = await storedIntent(card, orderId, state);
    let intent = stored.intent;
    let created = false;
    if (intent === undefined) {
      ({ intent, created, state } = await createIntent(services, card, orderId, state, stored.replaces));
    }

    let due = { amount: state.normalized.charge_cents, email: stripeReceiptEmail(state.normalized.email) };
    const addresses = checkoutAddressChange(input, { shippingFallsBackToBilling: false });
    const storesIntent = state.normalized.payment_intent_id !== intent.id;
    if (storesIntent || addresses) {
      const rerated = await rerateExpressShipping(store, state.order, addresses?.shipping);
      const meta: Record<string, string> = { ...rerated.meta };
      if (storesIntent) meta[META.paymentIntentId] = intent.id;
      if (addresses) meta[META.checkoutAddressUpdated] = new Date().toISOString();
      const change = { ...addresses, ...rerated.line, meta, metaMode: 'replace' as const };
      const updated = normalizeOrder(await store.updateOrder(orderId, buildOrderUpdate(state.order, change)));
      due = { amount: updated.charge_cents, email: stripeReceiptEmail(updated.email) };
    }

    // WooCommerce recalculates taxes on an address write (docs/decisions.md#d7).
    const changes: IntentChanges = {};
    if (intent.amount !== due.amount) changes.amount = due.amount;
    if (due.email !== undefined && intent.receiptEmail !== due.email) changes.receiptEmail = due.email;
    if (stripeCustomer !== undefined) {
      // docs/decisions.md#d41
      if (intent.customerId !== stripeCustomer) changes.customerId = stripeCustomer;
      const usage = saveCard ? 'off_session' : '';
      if ((intent.setupFutureUsage ?? '') !== usage) changes.setupFutureUsage = usage;
    }
    intent = await updateUnpaidIntent(card, intent, changes, orderId);

    context.outcome = created ? 'intent_created' : 'intent_reused';
    const response: PaymentIntentResponse = { success: true, client_secret: intent.clientSecret, payment_intent_id: intent.id };
    // Saved cards pay only an intent of their customer.
    const session =
      stripeCustomer !== undefined && intent.customerId === stripeCustomer
        ? await orWarn('saved_cards.session_failed', orderId, () => card.customers.createCustomerSession(stripeCustomer))
        : undefined;
    if (session !== undefined) response.customer_session_client_secret = session;
    return response;
  });
}
