/**
 * An in-memory WooCommerce order store with WooCommerce's own write semantics,
 * mounted (through woocommerce-handler.ts) by the tests' msw handlers and by
 * the local HTTP stand-in, so that the service's real store client is what
 * runs against it. It is not part of the production bundle.
 *
 * Modelled on WooCommerce 11 (REST v3 WC_REST_Orders_Controller on top of the
 * v2 controller, WC_Data, WC_Order), and checked against a real store:
 * - billing and shipping merge field by field;
 * - `meta_data` goes through WC_Data::update_meta_data, entry by entry:
 *   an internal key with a setter goes to the order's own field
 *   (`_payment_method`, `_payment_method_title`, `_transaction_id`, and
 *   `_date_paid` in Unix seconds, which becomes `date_paid`); an entry with a
 *   known `id` is updated; an entry with an unknown `id` deletes every entry
 *   with its key and is added with a new id; an entry without `id` takes the
 *   first entry with its key and deletes the other ones (so duplicates
 *   collapse, and "appending" a key that exists replaces it);
 * - `_paid_date` is an internal key without a setter: stored, but hidden from
 *   REST reads (HPOS; on legacy storage WooCommerce overwrites it with its own
 *   value), so it is kept aside here and never shown;
 * - `date_paid`/`date_paid_gmt` are read-only (the controller drops them);
 *   WC_Order::maybe_set_date_paid stamps them when the status changes to the
 *   payment-complete status: `processing`, or `completed` when no item needs
 *   processing (every item virtual and downloadable);
 * - `status` must be one of the registered statuses, without the `wc-` prefix
 *   (400 `rest_invalid_param` otherwise, before anything changes);
 * - taxes follow the "calculate tax based on" setting (default: the shipping
 *   address, the billing one when there is no shipping country), are rounded
 *   per line, and apply to lines, shipping and taxable fees;
 * - a missing order: GET 404 "Invalid ID.", PUT 400 "ID is invalid.", both
 *   `woocommerce_rest_shop_order_invalid_id`;
 * - the companion plugin's routes answer 404 `checkout_bridge_customer_not_found`
 *   and `checkout_bridge_order_not_found` (unknown order, or someone else's).
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
  tax_status: 'taxable' | 'none';
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
  shipping_tax: string;
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

/** An order refund as GET /orders/<id>/refunds shows it (amount positive, as a decimal string). */
export interface WooRefund {
  id: number;
  date_created: string;
  amount: string;
  reason: string;
  refunded_payment: boolean;
  meta_data: WooMeta[];
}

/** An order note (GET /orders/<id>/notes). */
export interface WooNote {
  id: number;
  note: string;
  customer_note: boolean;
  date_created: string;
}

export interface SeedLine {
  name?: string;
  quantity?: number;
  /** Line total after discounts, as a decimal string. */
  total: string;
  product_id?: number;
  /** Product flags: an order whose every item is virtual AND downloadable needs no processing. */
  virtual?: boolean;
  downloadable?: boolean;
}

export interface SeedOrder {
  id: number;
  status?: string;
  currency?: string;
  customer_id?: number;
  billing?: WooAddress;
  shipping?: WooAddress;
  lines?: SeedLine[];
  /** Fees are taxable unless `taxable: false` (WooCommerce's default tax status for a fee). */
  fees?: { name?: string; total: string; taxable?: boolean }[];
  shipping_total?: string;
  total_tax?: string;
  /** Override the stored `total` (to model a store whose total disagrees with its parts). */
  total?: string;
  date_paid?: string | null;
  customer_note?: string;
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

/** The companion plugin's payment gateway (scripts/stand-ins/store-gateway.ts). */
export interface RefundGateway {
  id: string;
  processRefund(
    orderId: number,
    refundId: number,
    amount: string,
    reason: string,
  ): Promise<{ ok: true; meta: Record<string, string> } | { ok: false; error: string }>;
}

export class WooError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toJSON(): { code: string; message: string; data: Record<string, unknown> } {
    return { code: this.code, message: this.message, data: { status: this.status, ...this.data } };
  }
}

/** The REST schema's status enum on a stock WooCommerce 11 (WC_REST_Orders_V2_Controller::get_order_statuses). */
export const STOCK_ORDER_STATUSES = [
  'auto-draft',
  'pending',
  'processing',
  'on-hold',
  'completed',
  'cancelled',
  'refunded',
  'failed',
  'checkout-draft',
] as const;

const BILLING_FIELDS = ['first_name', 'last_name', 'company', 'address_1', 'address_2', 'city', 'state', 'postcode', 'country', 'email', 'phone'];
const SHIPPING_FIELDS = ['first_name', 'last_name', 'company', 'address_1', 'address_2', 'city', 'state', 'postcode', 'country', 'phone'];

/** Internal meta keys WC_Data::update_meta_data hands to a setter (`set_` + the key without its underscore). */
const META_SETTERS: Record<string, (order: WooOrder, value: unknown) => void> = {
  _payment_method: (order, value) => {
    order.payment_method = String(value ?? '');
  },
  _payment_method_title: (order, value) => {
    order.payment_method_title = String(value ?? '');
  },
  _transaction_id: (order, value) => {
    order.transaction_id = String(value ?? '');
  },
  // set_date_paid(): a number is a Unix timestamp, a string an ISO 8601 date (WC_Data::set_date_prop).
  _date_paid: (order, value) => {
    const stamp = wooDate(value);
    order.date_paid = stamp;
    order.date_paid_gmt = stamp;
  },
};

/** Internal meta keys without a setter: stored by WooCommerce, never shown in REST reads. */
const HIDDEN_META = new Set(['_paid_date', '_completed_date']);

function emptyAddress(fields: string[]): WooAddress {
  return Object.fromEntries(fields.map((f) => [f, '']));
}

/** WooCommerce's REST date format, in the site's time zone (UTC here): 2026-11-22T02:30:00. */
function formatWooDate(date: Date): string {
  return date.toISOString().slice(0, 19);
}

function wooDate(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) {
    return formatWooDate(new Date(Number(value) * 1000));
  }
  if (typeof value === 'string') {
    const withZone = /([zZ]|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`;
    const parsed = Date.parse(withZone);
    return Number.isNaN(parsed) ? null : formatWooDate(new Date(parsed));
  }
  return null;
}

/** Decimal string → integer units with the given decimals, and back, without floats. */
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

/** The tax on one line at a rate in ten-thousandths of a percent, rounded half away from zero (PHP's round()). */
function lineTax(units: bigint, rateMicro: bigint): bigint {
  const scaled = units * rateMicro;
  const magnitude = (scaled < 0n ? -scaled : scaled) + 500_000n;
  const rounded = magnitude / 1_000_000n;
  return scaled < 0n ? -rounded : rounded;
}

export interface WooModelOptions {
  /** Extra order statuses registered by plugins, e.g. `shipped` by a shipment-tracking plugin. */
  customStatuses?: string[];
  /** Tax rate in percent by country. Without it, taxes are left as seeded (taxes not enabled). */
  taxRates?: Record<string, number>;
  /** WooCommerce → Settings → Tax → "Calculate tax based on"; WooCommerce's default is `shipping`. */
  taxBasedOn?: 'shipping' | 'billing' | 'base';
  /** The shop's base country, used with `taxBasedOn: 'base'`. */
  baseCountry?: string;
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
  /** The companion plugin's gateway, when the shop has it configured: refunds that ask for the money back go to it. */
  gateway: RefundGateway | undefined;
  private nextMetaId = 1000;
  private readonly statuses: Set<string>;
  /** The shop's settings; tests change them as a shop owner would in wp-admin. */
  readonly settings: WooModelOptions;
  /** Product flags of each order line, by line id (products are not part of the order resource). */
  private readonly lineProducts = new Map<number, { virtual: boolean; downloadable: boolean }>();
  /** Refunds by order id, newest last. */
  readonly refunds = new Map<number, WooRefund[]>();
  /** Order notes by order id, oldest first. */
  readonly notes = new Map<number, WooNote[]>();
  private nextRefundId = 5000;
  private nextNoteId = 7000;
  /** Internal meta the REST API never shows (`_paid_date`), by order id. */
  private readonly hiddenMeta = new Map<number, Record<string, unknown>>();

  constructor(options: WooModelOptions = {}) {
    this.settings = { ...options };
    this.statuses = new Set([...STOCK_ORDER_STATUSES, ...(options.customStatuses ?? [])]);
  }

  private now(): Date {
    return this.settings.now?.() ?? new Date();
  }

  private decimals(currency: string): number {
    if (this.settings.decimalsFor) return this.settings.decimalsFor(currency);
    const code = currency.toUpperCase();
    if (['JPY', 'KRW', 'VND', 'CLP'].includes(code)) return 0;
    if (['KWD', 'BHD', 'JOD', 'OMR', 'TND'].includes(code)) return 3;
    return 2;
  }

  /** What a plugin's register_post_status + wc_order_statuses filter does. */
  addStatus(status: string): void {
    this.statuses.add(status);
  }

  removeStatus(status: string): void {
    this.statuses.delete(status);
  }

  get registeredStatuses(): string[] {
    return [...this.statuses];
  }

  seed(seed: SeedOrder): WooOrder {
    const currency = seed.currency ?? 'USD';
    const decimals = this.decimals(currency);
    const created = formatWooDate(this.now());
    const lines = (seed.lines ?? [{ total: '10.00' }]).map((line, index) => {
      const id = seed.id * 100 + index + 1;
      this.lineProducts.set(id, { virtual: line.virtual ?? false, downloadable: line.downloadable ?? false });
      return {
        id,
        name: line.name ?? `Item ${index + 1}`,
        product_id: line.product_id ?? 500 + index,
        quantity: line.quantity ?? 1,
        subtotal: line.total,
        total: line.total,
        total_tax: fromUnits(0n, decimals),
      };
    });
    const order: WooOrder = {
      id: seed.id,
      status: seed.status ?? 'pending',
      currency,
      date_created: created,
      date_modified: created,
      discount_total: fromUnits(0n, decimals),
      shipping_total: seed.shipping_total ?? fromUnits(0n, decimals),
      shipping_tax: fromUnits(0n, decimals),
      total_tax: seed.total_tax ?? fromUnits(0n, decimals),
      total: '',
      customer_id: seed.customer_id ?? 0,
      customer_note: seed.customer_note ?? '',
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
        tax_status: fee.taxable === false ? ('none' as const) : ('taxable' as const),
        total: fee.total,
        total_tax: fromUnits(0n, decimals),
      })),
    };
    order.total = seed.total ?? this.sumTotal(order);
    this.orders.set(order.id, order);
    // A registered customer's order: the customer exists in WordPress.
    if (order.customer_id > 0 && !this.customers.has(order.customer_id)) {
      this.seedCustomer({ id: order.customer_id, email: order.billing.email || `customer${order.customer_id}@example.com` });
    }
    return structuredClone(order);
  }

  private sumTotal(order: WooOrder): string {
    const d = this.decimals(order.currency);
    let units = toUnits(order.shipping_total, d) + toUnits(order.total_tax, d);
    for (const line of order.line_items) units += toUnits(line.total, d);
    for (const fee of order.fee_lines) units += toUnits(fee.total, d);
    return fromUnits(units, d);
  }

  /** WC_Abstract_Order::get_tax_location: by the "calculate tax based on" setting. */
  private taxCountry(order: WooOrder): string {
    let basedOn = this.settings.taxBasedOn ?? 'shipping';
    if (basedOn === 'shipping' && !order.shipping.country) basedOn = 'billing';
    if (basedOn === 'base') return this.settings.baseCountry ?? 'US';
    return (basedOn === 'billing' ? order.billing.country : order.shipping.country) ?? '';
  }

  /** WooCommerce recalculates taxes from the customer's location when an address changes. */
  private recalculate(order: WooOrder): void {
    if (this.settings.taxRates) {
      const d = this.decimals(order.currency);
      const rate = this.settings.taxRates[this.taxCountry(order)] ?? 0;
      const rateMicro = BigInt(Math.round(rate * 10_000));
      let total = 0n;
      for (const line of order.line_items) {
        const tax = lineTax(toUnits(line.total, d), rateMicro);
        line.total_tax = fromUnits(tax, d);
        total += tax;
      }
      for (const fee of order.fee_lines) {
        const tax = fee.tax_status === 'taxable' ? lineTax(toUnits(fee.total, d), rateMicro) : 0n;
        fee.total_tax = fromUnits(tax, d);
        total += tax;
      }
      const shippingTax = lineTax(toUnits(order.shipping_total, d), rateMicro);
      order.shipping_tax = fromUnits(shippingTax, d);
      order.total_tax = fromUnits(total + shippingTax, d);
    }
    order.total = this.sumTotal(order);
  }

  /** WC_Order::needs_processing: some item is not both virtual and downloadable. */
  needsProcessing(order: Pick<WooOrder, 'line_items'>): boolean {
    return order.line_items.some((line) => {
      const product = this.lineProducts.get(line.id);
      return !(product?.virtual && product.downloadable);
    });
  }

  /** WC_Order::maybe_set_date_paid, run when the status changes. */
  private maybeSetDatePaid(order: WooOrder): void {
    if (order.date_paid) return;
    const paymentCompleteStatus = this.needsProcessing(order) ? 'processing' : 'completed';
    const reached =
      order.status === paymentCompleteStatus || (paymentCompleteStatus === 'processing' && order.status === 'completed');
    if (reached) {
      const stamp = formatWooDate(this.now());
      order.date_paid = stamp;
      order.date_paid_gmt = stamp;
    }
  }

  get(id: number): WooOrder {
    const order = this.orders.get(id);
    if (!order) throw new WooError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    return structuredClone(order);
  }

  /** Internal meta the REST API hides (e.g. `_paid_date`), for tests that check it was written. */
  hiddenMetaOf(id: number): Record<string, unknown> {
    return { ...this.hiddenMeta.get(id) };
  }

  private validate(body: Record<string, unknown>): void {
    if (body.status !== undefined && (typeof body.status !== 'string' || !this.statuses.has(body.status))) {
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): status', {
        params: { status: `status is not one of ${[...this.statuses].join(', ')}.` },
      });
    }
    if (body.meta_data !== undefined && !Array.isArray(body.meta_data)) {
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): meta_data', {
        params: { meta_data: 'meta_data is not of type array.' },
      });
    }
  }

  update(id: number, body: Record<string, unknown>): WooOrder {
    const stored = this.orders.get(id);
    if (!stored) throw new WooError(400, 'woocommerce_rest_shop_order_invalid_id', 'ID is invalid.');
    // WordPress validates the request against the schema before the controller changes anything.
    this.validate(body);
    const order = structuredClone(stored);
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
    // date_paid and date_paid_gmt are read-only in the schema: the controller never passes them on.

    if (Array.isArray(body.meta_data)) this.writeMeta(order, body.meta_data as unknown[]);

    // The controller sets the status last, "so transitions have new data" (after meta such as _date_paid).
    if (typeof body.status === 'string' && body.status !== order.status) {
      order.status = body.status;
      this.maybeSetDatePaid(order);
    }
    if (addressChanged) this.recalculate(order);
    order.date_modified = formatWooDate(this.now());
    this.orders.set(id, order);
    return structuredClone(order);
  }

  private units(order: WooOrder, amount: string): bigint {
    return toUnits(amount, this.decimals(order.currency));
  }

  /** What remains to refund: the order total less its refunds (WC_Order::get_remaining_refund_amount). */
  remainingRefund(id: number): string {
    const order = this.get(id);
    const refunded = (this.refunds.get(id) ?? []).reduce((sum, refund) => sum + this.units(order, refund.amount), 0n);
    return fromUnits(this.units(order, order.total) - refunded, this.decimals(order.currency));
  }

  listRefunds(id: number): WooRefund[] {
    this.requireOrder(id);
    // WooCommerce lists newest first.
    return structuredClone([...(this.refunds.get(id) ?? [])].reverse());
  }

  /**
   * POST /orders/<id>/refunds as WC_REST_Order_Refunds_Controller and wc_create_refund do it: a negative
   * amount is 400 `woocommerce_rest_invalid_order_refund`; an amount above what remains makes
   * wc_create_refund throw "Invalid refund amount.", which the controller answers 500
   * `woocommerce_rest_cannot_create_order_refund`; `api_refund` (default true) asks the order's gateway to
   * pay the money back, which this stand-in has none of; a refund that leaves nothing to refund marks the
   * order `refunded` (wc_order_fully_refunded).
   */
  createRefund(id: number, body: Record<string, unknown>): WooRefund {
    const order = this.orders.get(id);
    if (!order) throw new WooError(404, 'woocommerce_rest_invalid_order_id', 'Invalid order ID.');
    const raw = typeof body.amount === 'number' ? String(body.amount) : body.amount;
    if (typeof raw !== 'string' || !/^-?\d+(\.\d+)?$/.test(raw)) {
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): amount', { params: { amount: 'amount is not of type string.' } });
    }
    if (raw.startsWith('-')) {
      throw new WooError(400, 'woocommerce_rest_invalid_order_refund', 'Refund amount must be greater than zero.');
    }
    const amount = this.units(order, raw);
    if (amount > this.units(order, this.remainingRefund(id))) {
      throw new WooError(500, 'woocommerce_rest_cannot_create_order_refund', 'Invalid refund amount.');
    }
    if (body.api_refund !== false) {
      throw new WooError(500, 'woocommerce_rest_cannot_create_order_refund', 'The payment gateway for this order does not exist.');
    }
    const refund: WooRefund = {
      id: this.nextRefundId++,
      date_created: formatWooDate(this.now()),
      amount: fromUnits(amount, this.decimals(order.currency)),
      reason: typeof body.reason === 'string' ? body.reason : '',
      refunded_payment: false,
      meta_data: (Array.isArray(body.meta_data) ? body.meta_data : [])
        .filter((m): m is { key: string; value: unknown } => typeof m === 'object' && m !== null && typeof (m as { key?: unknown }).key === 'string')
        .map((m) => ({ id: this.nextMetaId++, key: m.key, value: m.value })),
    };
    this.refunds.set(id, [...(this.refunds.get(id) ?? []), refund]);
    if (this.units(order, this.remainingRefund(id)) <= 0n) {
      order.status = 'refunded';
      order.date_modified = formatWooDate(this.now());
    }
    return structuredClone(refund);
  }

  /**
   * A refund that asks the order's gateway for the money back (the admin's "Refund via …" button,
   * or POST /orders/<id>/refunds without `api_refund: false`), as wc_create_refund does it with
   * refund_payment: the refund is saved first, then wc_refund_payment calls the gateway registered
   * under the order's payment method; a gateway error deletes the refund and is answered 500 with its
   * message; success marks the refund `refunded_payment` (with the meta the gateway set on it), and
   * only then may the order become `refunded`.
   */
  async createRefundViaGateway(id: number, body: Record<string, unknown>): Promise<WooRefund> {
    const order = this.orders.get(id);
    if (!order) throw new WooError(404, 'woocommerce_rest_invalid_order_id', 'Invalid order ID.');
    const gateway = this.gateway;
    if (!gateway || gateway.id !== order.payment_method) {
      throw new WooError(500, 'woocommerce_rest_cannot_create_order_refund', 'The payment gateway for this order does not exist.');
    }
    const statusBefore = order.status;
    const created = this.createRefund(id, { ...body, api_refund: false });
    order.status = statusBefore;
    const result = await gateway.processRefund(id, created.id, created.amount, created.reason);
    const list = this.refunds.get(id) ?? [];
    if (!result.ok) {
      this.refunds.set(id, list.filter((r) => r.id !== created.id));
      throw new WooError(500, 'woocommerce_rest_cannot_create_order_refund', result.error);
    }
    const refund = list.find((r) => r.id === created.id)!;
    refund.refunded_payment = true;
    for (const [key, value] of Object.entries(result.meta)) refund.meta_data.push({ id: this.nextMetaId++, key, value });
    if (this.units(order, this.remainingRefund(id)) <= 0n) order.status = 'refunded';
    return structuredClone(refund);
  }

  /** DELETE /orders/<id>/refunds/<refund_id>: refunds cannot be trashed (WC_REST_CRUD_Controller: 501), so only `force=true` deletes. */
  deleteRefund(id: number, refundId: number, force: boolean): WooRefund {
    this.requireOrder(id);
    const list = this.refunds.get(id) ?? [];
    const refund = list.find((r) => r.id === refundId);
    if (!refund) throw new WooError(404, 'woocommerce_rest_invalid_id', 'Invalid ID.');
    if (!force) throw new WooError(501, 'woocommerce_rest_trash_not_supported', 'The shop_order_refund does not support trashing.');
    this.refunds.set(id, list.filter((r) => r.id !== refundId));
    return structuredClone(refund);
  }

  /**
   * POST /orders/<id>/notes (WC_REST_Order_Notes_Controller): `note` is a required argument, so WordPress
   * refuses a request without it; `customer_note` (default false) also emails the customer.
   */
  addNote(id: number, body: Record<string, unknown>): WooNote {
    if (typeof body.note !== 'string') {
      throw new WooError(400, 'rest_missing_callback_param', 'Missing parameter(s): note', { params: ['note'] });
    }
    if (!this.orders.has(id)) throw new WooError(404, 'woocommerce_rest_order_invalid_id', 'Invalid order ID.');
    const note: WooNote = { id: this.nextNoteId++, note: body.note, customer_note: body.customer_note === true, date_created: formatWooDate(this.now()) };
    this.notes.set(id, [...(this.notes.get(id) ?? []), note]);
    return structuredClone(note);
  }

  listNotes(id: number): WooNote[] {
    this.requireOrder(id);
    return structuredClone([...(this.notes.get(id) ?? [])].reverse());
  }

  private requireOrder(id: number): void {
    if (!this.orders.has(id)) throw new WooError(404, 'woocommerce_rest_invalid_order_id', 'Invalid order ID.');
  }

  /** WC_REST_Orders_V2_Controller: `$order->update_meta_data( key, value, id ?? '' )` for each entry, then save. */
  private writeMeta(order: WooOrder, entries: unknown[]): void {
    // null values are deletions, carried out at save (WC_Data::save_meta_data); new entries get their id then.
    const meta: { id: number | undefined; key: string; value: unknown }[] = order.meta_data.map((m) => ({ ...m }));
    for (const raw of entries) {
      if (!raw || typeof raw !== 'object') continue;
      const { id, key, value } = raw as { id?: unknown; key?: unknown; value?: unknown };
      if (typeof key !== 'string' || key === '') continue;
      const setter = META_SETTERS[key];
      if (setter) {
        setter(order, value);
        continue;
      }
      if (HIDDEN_META.has(key)) {
        this.hiddenMeta.set(order.id, { ...this.hiddenMeta.get(order.id), [key]: value });
        continue;
      }
      let target: (typeof meta)[number] | undefined;
      if (typeof id === 'number' && id > 0) {
        target = meta.find((m) => m.id === id);
      } else {
        const matches = meta.filter((m) => m.key === key && m.value !== null);
        for (const match of matches) match.value = null;
        target = matches[0];
      }
      if (target) {
        target.key = key;
        target.value = value;
      } else {
        // add_meta_data( key, value, unique = true ): every entry with the key goes first.
        for (const m of meta) if (m.key === key) m.value = null;
        meta.push({ id: undefined, key, value });
      }
    }
    order.meta_data = meta
      .filter((m) => m.value !== null)
      .map((m) => ({ id: m.id ?? this.nextMetaId++, key: m.key, value: m.value }));
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
    this.requireCustomer(customerId);
    this.carts.set(customerId, []);
    return { cleared: true };
  }

  /** Companion plugin: POST …/customers/<id>/cart/restore {order_id}. */
  restoreCart(customerId: number, orderId: number): { restored: true; items: number } {
    this.requireBridge();
    this.requireCustomer(customerId);
    const order = this.orders.get(orderId);
    if (!order || order.customer_id !== customerId) {
      throw new WooError(404, 'checkout_bridge_order_not_found', 'Order not found for this customer.');
    }
    const items = order.line_items.map((line) => ({ product_id: line.product_id, quantity: line.quantity }));
    this.carts.set(customerId, items);
    return { restored: true, items: items.length };
  }

  private requireCustomer(customerId: number): void {
    if (!this.customers.has(customerId)) throw new WooError(404, 'checkout_bridge_customer_not_found', 'Customer not found.');
  }

  private requireBridge(): void {
    if (!this.cartBridgeInstalled) throw new WooError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  }
}
