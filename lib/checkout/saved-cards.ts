/** A registered customer's Stripe Customer, for saved cards (docs/decisions.md#d41). */
import type { CardProvider } from '@/lib/card/stripe';
import { digestOf, pauseBeforeRetry } from '@/lib/checkout/load-payable-order';
import { CardProviderError, StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import type { StoreCustomer } from '@/lib/store/types';

/** The official gateway's name; the plugin answers the gateway's table-prefixed value under it. */
export const STRIPE_CUSTOMER_META = '_stripe_customer_id';

const CUSTOMER_ID = /^cus_[A-Za-z0-9]{1,250}$/;

export function customerIdempotencyKey(parts: { wooCustomerId: number; replaces: string | undefined; email: string; name: string }): string {
  const digest = digestOf([parts.wooCustomerId, parts.replaces ?? '', parts.email, parts.name], 32);
  return `checkout-customer-${parts.wooCustomerId}-${digest}`;
}

function storedStripeCustomer(customer: StoreCustomer): string | undefined {
  const entry = [...customer.meta_data].reverse().find((meta) => meta.key === STRIPE_CUSTOMER_META);
  return typeof entry?.value === 'string' && entry.value.trim() !== '' ? entry.value.trim() : undefined;
}

/** How long a store found dropping the meta write gets no new Customer (docs/decisions.md#d41). */
export const META_DROPPED_TTL_MS = 60 * 60 * 1000;
const metaDroppedUntil = new WeakMap<Services, number>();

export const CHECKOUT_BRIDGE_ADVICE = 'install or update the Checkout Bridge plugin to 1.4.0, which lets the customers REST API keep _stripe_customer_id';

async function createCustomer(card: CardProvider, customer: StoreCustomer, replaces: string | undefined): Promise<string> {
  const email = customer.email.trim();
  const name = `${customer.first_name} ${customer.last_name}`.trim();
  const idempotencyKey = customerIdempotencyKey({ wooCustomerId: customer.id, replaces, email, name });
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await card.customers.createCustomer({ wooCustomerId: customer.id, email: email || undefined, name: name || undefined, idempotencyKey });
    } catch (error) {
      const inProgress = error instanceof CardProviderError && error.status === 409;
      if (!inProgress || !(await pauseBeforeRetry(attempt))) throw error;
    }
  }
}

/** The customer id comes from the order, never the client; a new Customer is stored before anything uses it. */
export async function stripeCustomerFor(services: Services, card: CardProvider, wooCustomerId: number, create: boolean): Promise<string | undefined> {
  if (!Number.isSafeInteger(wooCustomerId) || wooCustomerId <= 0) return undefined;
  const store = services.store();
  const customer = await store.getCustomer(wooCustomerId).catch((error: unknown) => {
    // The user was deleted after ordering: the order is paid as a guest's.
    if (error instanceof StoreError && error.code === 'woocommerce_rest_invalid_id') return undefined;
    throw error;
  });
  if (customer === undefined) return undefined;
  const stored = storedStripeCustomer(customer);
  if (stored !== undefined) {
    const found = CUSTOMER_ID.test(stored) ? await card.customers.retrieveCustomer(stored) : undefined;
    if (found !== undefined) return found;
    log.warn('saved_cards.customer_missing', { wooCustomerId, recreate: create });
  }
  if (!create) return undefined;
  if (Date.now() < (metaDroppedUntil.get(services) ?? 0)) {
    log.warn('saved_cards.not_saved', { wooCustomerId, reason: 'store.customer_meta_dropped' });
    return undefined;
  }
  const created = await createCustomer(card, customer, stored);
  const answer = await store.setCustomerMeta(wooCustomerId, STRIPE_CUSTOMER_META, created).catch((error: unknown) => {
    if (!(error instanceof StoreError && error.status === 403)) throw error;
    log.warn('saved_cards.not_saved', { wooCustomerId, reason: 'store.customer_not_editable', code: error.code });
    return undefined;
  });
  if (answer === undefined) return undefined;
  const kept = storedStripeCustomer(answer);
  if (kept !== created) {
    metaDroppedUntil.set(services, Date.now() + META_DROPPED_TTL_MS);
    log.error('store.customer_meta_dropped', { wooCustomerId, shown: kept === undefined ? 'none' : 'other', advice: CHECKOUT_BRIDGE_ADVICE });
    return undefined;
  }
  log.info('saved_cards.customer_created', { wooCustomerId, replaced: stored !== undefined });
  return created;
}
