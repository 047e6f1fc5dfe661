/**
 * Customer meta as WordPress keeps it and WooCommerce's customers REST API shows it:
 * WC_Customer_Data_Store::exclude_internal_meta_keys hides every key holding the table prefix
 * (`wp__stripe_customer_id`, the official Stripe gateway's update_user_option key), the controller
 * skips protected (underscored) keys on read and on write (a PUT answers 200 and stores nothing),
 * and a `meta_data` write replaces a key's value (update_meta_data). With the companion plugin's
 * saved-cards include (stripe-customer.php, Checkout Bridge 1.4.0), `_stripe_customer_id` alone is
 * unprotected over REST, shown as the gateway's get_user_option() value (prefixed key first), and a
 * written one is mirrored to the prefixed key. Not part of the production bundle.
 */
import { WooError, type WooCommerceModel, type WooCustomer } from './model';

export const TABLE_PREFIX = 'wp_';
const STRIPE_KEY = '_stripe_customer_id';

interface MetaRow {
  id: number;
  key: string;
  value: unknown;
}

interface CustomerMetaState {
  rows: Map<number, MetaRow[]>;
  nextId: number;
  /** The plugin release with stripe-customer.php; false models an older plugin. */
  stripeCustomerBridge: boolean;
  /** The REST key's user: a shop manager may edit only users whose role is `customer` (wc_rest_check_user_permissions). */
  keyRole: 'administrator' | 'shop_manager';
}

const states = new WeakMap<WooCommerceModel, CustomerMetaState>();

/** The customer meta of a model (made on first use, so model.ts needs nothing of it). */
export function customerMeta(model: WooCommerceModel): CustomerMetaState {
  let state = states.get(model);
  if (!state) {
    state = { rows: new Map(), nextId: 9000, stripeCustomerBridge: true, keyRole: 'administrator' };
    states.set(model, state);
  }
  return state;
}

const hidden = (key: string) => key.includes(TABLE_PREFIX) || key.toLowerCase().startsWith('wp_');
const bridged = (model: WooCommerceModel) => customerMeta(model).stripeCustomerBridge && model.cartBridgeInstalled;
/** is_protected_meta( $key, 'user' ) over REST: every underscored key, but the plugin's own. */
const isProtected = (model: WooCommerceModel, key: string) => key.startsWith('_') && !(key === STRIPE_KEY && bridged(model));

function rowsOf(model: WooCommerceModel, customerId: number): MetaRow[] {
  const state = customerMeta(model);
  const rows = state.rows.get(customerId) ?? [];
  state.rows.set(customerId, rows);
  return rows;
}

/** update_user_meta(): the key's value replaced, or added. */
export function setUserMeta(model: WooCommerceModel, customerId: number, key: string, value: unknown): void {
  const rows = rowsOf(model, customerId);
  const row = rows.find((r) => r.key === key);
  if (row) row.value = value;
  else rows.push({ id: customerMeta(model).nextId++, key, value });
  // stripe-customer.php: the gateway reads a prefixed key first, so one that differs is brought in line.
  if (key === STRIPE_KEY && bridged(model) && typeof value === 'string' && value !== '') {
    if (gatewayReadsCustomer(model, customerId) !== value) setUserMeta(model, customerId, `${TABLE_PREFIX}${STRIPE_KEY}`, value);
  }
}

/** get_user_meta( $id, $key, true ). */
export function userMeta(model: WooCommerceModel, customerId: number, key: string): unknown {
  return rowsOf(model, customerId).find((r) => r.key === key)?.value;
}

/** What the official gateway saves: update_user_option( $id, '_stripe_customer_id', $id, false ). */
export function gatewaySavesCustomer(model: WooCommerceModel, customerId: number, stripeCustomerId: string): void {
  setUserMeta(model, customerId, `${TABLE_PREFIX}${STRIPE_KEY}`, stripeCustomerId);
}

/** get_user_option(): the site's prefixed key, else the plain one. */
function userOption(model: WooCommerceModel, customerId: number, key: string): unknown {
  const prefixed = userMeta(model, customerId, `${TABLE_PREFIX}${key}`);
  return prefixed !== undefined && prefixed !== '' ? prefixed : userMeta(model, customerId, key);
}

/** The Stripe Customer the official gateway uses: get_user_option( '_stripe_customer_id', $id ). */
export function gatewayReadsCustomer(model: WooCommerceModel, customerId: number): unknown {
  return userOption(model, customerId, STRIPE_KEY);
}

/** GET /wc/v3/customers/<id>: the customer with the meta the REST API shows. */
export function presentCustomer(model: WooCommerceModel, customerId: number): WooCustomer & { meta_data: MetaRow[] } {
  const customer = model.getCustomer(customerId);
  let meta = rowsOf(model, customerId)
    .filter((row) => !hidden(row.key) && !isProtected(model, row.key))
    .map((row) => structuredClone(row));
  const gatewayValue = userOption(model, customerId, STRIPE_KEY);
  if (bridged(model) && typeof gatewayValue === 'string' && gatewayValue !== '') {
    const own = meta.find((row) => row.key === STRIPE_KEY);
    meta = [...meta.filter((row) => row.key !== STRIPE_KEY), { id: own?.id ?? 0, key: STRIPE_KEY, value: gatewayValue }];
  }
  return { ...customer, meta_data: meta };
}

/** PUT | POST /wc/v3/customers/<id> with `meta_data` (other fields are not modelled and are left alone). */
export function updateCustomer(model: WooCommerceModel, customerId: number, payload: Record<string, unknown>): WooCustomer & { meta_data: MetaRow[] } {
  const customer = model.getCustomer(customerId);
  if (customerMeta(model).keyRole === 'shop_manager' && customer.role !== 'customer') {
    throw new WooError(403, 'woocommerce_rest_cannot_edit', 'Sorry, you are not allowed to edit this resource.');
  }
  const meta = payload.meta_data;
  if (meta !== undefined) {
    if (!Array.isArray(meta) || !meta.every((m) => m !== null && typeof m === 'object' && typeof (m as { key?: unknown }).key === 'string')) {
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): meta_data', { params: { meta_data: 'meta_data[0] is not of type object.' } });
    }
    for (const entry of meta as { key: string; value?: unknown }[]) {
      if (!isProtected(model, entry.key)) setUserMeta(model, customerId, entry.key, entry.value ?? '');
    }
  }
  return presentCustomer(model, customerId);
}
