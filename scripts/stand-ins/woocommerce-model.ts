/**
 * An in-memory WooCommerce order store with WooCommerce's own write semantics,
 * shared by the tests' msw handlers and the local HTTP stand-in, so that the
 * service's real store client is what runs against it.
 *
 * Modelled on WooCommerce REST v3 (WC_REST_Orders_Controller / WC_Data):
 * - billing and shipping merge field by field;
 * - meta_data entries update by `id`, else the first entry with the same key,
 *   else are added; internal keys (`_payment_method`, `_payment_method_title`,
 *   `_transaction_id`) go to the order's own fields;
 * - `date_paid` is read-only and stamped when the status becomes processing or completed;
 * - taxes and totals are recalculated when billing or shipping is written;
 * - an unknown status is 400 `rest_invalid_param`; a missing order is 404
 *   `woocommerce_rest_shop_order_invalid_id`.
 * It is not part of the production bundle.
 */

export interface WooAddress {
  [field: string]: string;
}

export interface WooMeta {
  id: number;
  key: string;
  value: unknown;
}

export interface WooLine {
  id: number;
  name: string;
  product_id: number;
  quantity: number;
  subtotal: string;
  total: string;
  total_tax: string;
}

export interface WooFeeLine {
  id: number;
  name: string;
  total: string;
  total_tax: string;
}

export interface WooOrder {
  id: number;
  status: string;
  currency: string;
  date_created: string;
  date_modified: string;
  discount_total: string;
  shipping_total: string;
  total_tax: string;
  total: string;
  customer_id: number;
  customer_note: string;
  billing: WooAddress;
  shipping: WooAddress;
  payment_method: string;
  payment_method_title: string;
  transaction_id: string;
  date_paid: string | null;
  date_paid_gmt: string | null;
  meta_data: WooMeta[];
  line_items: WooLine[];
  fee_lines: WooFeeLine[];
}

export interface SeedOrder {
  id: number;
  status?: string;
  currency?: string;
  customer_id?: number;
  billing?: WooAddress;
  shipping?: WooAddress;
  /** Line totals after discounts, as decimal strings. */
  lines?: { name?: string; quantity?: number; total: string }[];
  fees?: { name?: string; total: string }[];
  shipping_total?: string;
  total_tax?: string;
  /** Override the stored `total` (to model a store whose total disagrees with its parts). */
  total?: string;
  date_paid?: string | null;
  meta_data?: { key: string; value: unknown }[];
}

export interface WooCustomer {
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  username: string;
  role: string;
  billing: WooAddress;
  shipping: WooAddress;
}

export class WooError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const CORE_STATUSES = ['pending', 'processing', 'on-hold', 'completed', 'cancelled', 'refunded', 'failed', 'checkout-draft'];
const BILLING_FIELDS = ['first_name', 'last_name', 'company', 'address_1', 'address_2', 'city', 'state', 'postcode', 'country', 'email', 'phone'];
const SHIPPING_FIELDS = ['first_name', 'last_name', 'company', 'address_1', 'address_2', 'city', 'state', 'postcode', 'country', 'phone'];
const INTERNAL_META: Record<string, 'payment_method' | 'payment_method_title' | 'transaction_id'> = {
  _payment_method: 'payment_method',
  _payment_method_title: 'payment_method_title',
  _transaction_id: 'transaction_id',
};

function emptyAddress(fields: string[]): WooAddress {
  return Object.fromEntries(fields.map((f) => [f, '']));
}

/** Decimal string → integer hundredths/thousandths with the given decimals, and back, without floats. */
function toUnits(value: string, decimals: number): bigint {
  const [whole = '0', fraction = ''] = value.replace(/^\+/, '').split('.');
  const negative = whole.startsWith('-');
  const units = BigInt(`${whole.replace('-', '') || '0'}${fraction.slice(0, decimals).padEnd(decimals, '0')}`);
  return negative ? -units : units;
}

function fromUnits(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const text = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return negative ? `-${text}` : text;
}

export interface WooModelOptions {
  /** Extra order statuses registered by plugins, e.g. `shipped`, `awaiting_shipment`. */
  customStatuses?: string[];
  /** Tax rate in percent by billing country, applied to lines and shipping on recalculation. */
  taxRates?: Record<string, number>;
  /** Price decimals (WooCommerce setting); 2 by default, 0 for JPY shops, 3 for KWD. */
  decimalsFor?: (currency: string) => number;
  now?: () => Date;
}

export class WooCommerceModel {
  readonly orders = new Map<number, WooOrder>();
  /** Customers' persistent carts, for the companion plugin's routes. */
  readonly carts = new Map<number, { product_id: number; quantity: number }[]>();
  /** Registered customers (GET /customers/<id>); orders refer to them by customer_id. */
  readonly customers = new Map<number, WooCustomer>();
  cartBridgeInstalled = true;
  private nextMetaId = 1000;
  private readonly statuses: Set<string>;
  private readonly options: WooModelOptions;

  constructor(options: WooModelOptions = {}) {
    this.options = options;
    this.statuses = new Set([...CORE_STATUSES, ...(options.customStatuses ?? [])]);
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private decimals(currency: string): number {
    if (this.options.decimalsFor) return this.options.decimalsFor(currency);
    const code = currency.toUpperCase();
    if (['JPY', 'KRW', 'VND', 'CLP'].includes(code)) return 0;
    if (['KWD', 'BHD', 'JOD', 'OMR', 'TND'].includes(code)) return 3;
    return 2;
  }

  addStatus(status: string): void {
    this.statuses.add(status);
  }

  removeStatus(status: string): void {
    this.statuses.delete(status);
  }

  seed(seed: SeedOrder): WooOrder {
    const currency = seed.currency ?? 'USD';
    const decimals = this.decimals(currency);
    const created = this.now().toISOString().slice(0, 19);
    const lines = (seed.lines ?? [{ total: '10.00' }]).map((line, index) => ({
      id: seed.id * 100 + index + 1,
      name: line.name ?? `Item ${index + 1}`,
      product_id: 500 + index,
      quantity: line.quantity ?? 1,
      subtotal: line.total,
      total: line.total,
      total_tax: fromUnits(0n, decimals),
    }));
    const order: WooOrder = {
      id: seed.id,
      status: seed.status ?? 'pending',
      currency,
      date_created: created,
      date_modified: created,
      discount_total: fromUnits(0n, decimals),
      shipping_total: seed.shipping_total ?? fromUnits(0n, decimals),
      total_tax: seed.total_tax ?? fromUnits(0n, decimals),
      total: '',
      customer_id: seed.customer_id ?? 0,
      customer_note: '',
      billing: { ...emptyAddress(BILLING_FIELDS), ...seed.billing },
      shipping: { ...emptyAddress(SHIPPING_FIELDS), ...seed.shipping },
      payment_method: '',
      payment_method_title: '',
      transaction_id: '',
      date_paid: seed.date_paid ?? null,
      date_paid_gmt: seed.date_paid ?? null,
      meta_data: (seed.meta_data ?? []).map((m) => ({ id: this.nextMetaId++, key: m.key, value: m.value })),
      line_items: lines,
      fee_lines: (seed.fees ?? []).map((fee, index) => ({
        id: seed.id * 100 + 50 + index,
        name: fee.name ?? `Fee ${index + 1}`,
        total: fee.total,
        total_tax: fromUnits(0n, decimals),
      })),
    };
    order.total = seed.total ?? this.sumTotal(order);
    this.orders.set(order.id, order);
    if (order.customer_id > 0 && !this.carts.has(order.customer_id)) this.carts.set(order.customer_id, []);
    return structuredClone(order);
  }

  private sumTotal(order: WooOrder): string {
    const d = this.decimals(order.currency);
    let units = toUnits(order.shipping_total, d) + toUnits(order.total_tax, d);
    for (const line of order.line_items) units += toUnits(line.total, d);
    for (const fee of order.fee_lines) units += toUnits(fee.total, d);
    return fromUnits(units, d);
  }

  /** WooCommerce recalculates taxes from the customer's location when an address changes. */
  private recalculate(order: WooOrder): void {
    const rate = this.options.taxRates?.[order.billing.country || order.shipping.country || ''];
    if (rate !== undefined) {
      const d = this.decimals(order.currency);
      let taxable = toUnits(order.shipping_total, d);
      for (const line of order.line_items) taxable += toUnits(line.total, d);
      // Percent with two decimals of precision, rounded half up, in integer arithmetic.
      const rateHundredths = BigInt(Math.round(rate * 100));
      const tax = (taxable * rateHundredths + 5000n) / 10000n;
      order.total_tax = fromUnits(tax, d);
    }
    order.total = this.sumTotal(order);
  }

  get(id: number): WooOrder {
    const order = this.orders.get(id);
    if (!order) throw new WooError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    return structuredClone(order);
  }

  update(id: number, body: Record<string, unknown>): WooOrder {
    const stored = this.orders.get(id);
    if (!stored) throw new WooError(400, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    if (typeof body.status === 'string' && !this.statuses.has(body.status.replace(/^wc-/, ''))) {
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): status');
    }
    // Validate everything before changing anything, as WordPress validates the request first.
    const order = structuredClone(stored);
    const previousStatus = order.status;
    let addressChanged = false;

    for (const [part, fields] of [
      ['billing', BILLING_FIELDS],
      ['shipping', SHIPPING_FIELDS],
    ] as const) {
      const incoming = body[part];
      if (incoming && typeof incoming === 'object') {
        for (const [field, value] of Object.entries(incoming as Record<string, unknown>)) {
          if (fields.includes(field) && typeof value === 'string') order[part][field] = value;
        }
        addressChanged = true;
      }
    }
    for (const field of ['customer_note', 'payment_method', 'payment_method_title', 'transaction_id'] as const) {
      if (typeof body[field] === 'string') order[field] = body[field] as string;
    }
    if (typeof body.customer_id === 'number') order.customer_id = body.customer_id;

    if (Array.isArray(body.meta_data)) {
      for (const raw of body.meta_data as { id?: unknown; key?: unknown; value?: unknown }[]) {
        if (typeof raw?.key !== 'string') continue;
        const internal = INTERNAL_META[raw.key];
        if (internal) {
          order[internal] = String(raw.value ?? '');
          continue;
        }
        const byId = typeof raw.id === 'number' ? order.meta_data.find((m) => m.id === raw.id) : undefined;
        const target = byId ?? order.meta_data.find((m) => m.key === raw.key);
        if (target) {
          target.key = raw.key;
          target.value = raw.value;
        } else {
          order.meta_data.push({ id: this.nextMetaId++, key: raw.key, value: raw.value });
        }
      }
    }

    if (typeof body.status === 'string') {
      order.status = body.status.replace(/^wc-/, '');
      const paidNow = ['processing', 'completed'].includes(order.status) && !['processing', 'completed'].includes(previousStatus);
      if (paidNow && !order.date_paid) {
        const stamp = this.now().toISOString().slice(0, 19);
        order.date_paid = stamp;
        order.date_paid_gmt = stamp;
      }
    }
    if (addressChanged) this.recalculate(order);
    order.date_modified = this.now().toISOString().slice(0, 19);
    this.orders.set(id, order);
    return structuredClone(order);
  }

  seedCustomer(seed: { id: number; email: string; first_name?: string; last_name?: string; billing?: WooAddress; shipping?: WooAddress }): WooCustomer {
    const customer: WooCustomer = {
      id: seed.id,
      email: seed.email,
      first_name: seed.first_name ?? '',
      last_name: seed.last_name ?? '',
      username: seed.email.split('@')[0] ?? `customer${seed.id}`,
      role: 'customer',
      billing: { ...emptyAddress(BILLING_FIELDS), email: seed.email, ...seed.billing },
      shipping: { ...emptyAddress(SHIPPING_FIELDS), ...seed.shipping },
    };
    this.customers.set(customer.id, customer);
    if (!this.carts.has(customer.id)) this.carts.set(customer.id, []);
    return structuredClone(customer);
  }

  getCustomer(id: number): WooCustomer {
    const customer = this.customers.get(id);
    if (!customer) throw new WooError(404, 'woocommerce_rest_invalid_id', 'Invalid resource ID.');
    return structuredClone(customer);
  }

  /** Companion plugin: DELETE …/customers/<id>/cart. */
  clearCart(customerId: number): { cleared: true } {
    this.requireBridge();
    this.carts.set(customerId, []);
    return { cleared: true };
  }

  /** Companion plugin: POST …/customers/<id>/cart/restore {order_id}. */
  restoreCart(customerId: number, orderId: number): { restored: true; items: number } {
    this.requireBridge();
    const order = this.orders.get(orderId);
    if (!order || order.customer_id !== customerId) {
      throw new WooError(404, 'checkout_bridge_order_not_found', 'Order not found for this customer.');
    }
    const items = order.line_items.map((line) => ({ product_id: line.product_id, quantity: line.quantity }));
    this.carts.set(customerId, items);
    return { restored: true, items: items.length };
  }

  private requireBridge(): void {
    if (!this.cartBridgeInstalled) throw new WooError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  }
}
