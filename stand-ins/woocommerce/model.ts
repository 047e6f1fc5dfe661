/**
 * An in-memory WooCommerce order store with WooCommerce's own write semantics,
 * mounted (through fetch-handler.ts) by the tests' msw handlers and by
 * the local HTTP stand-in, so that the service's real store client is what
 * runs against it. It is not part of the production bundle.
 *
 * Modelled on WooCommerce 10 (REST v3 WC_REST_Orders_Controller on top of the
 * v2 controller, WC_Data, WC_Order, WordPress's REST request validation), and
 * compared request by request with a real 10.0.2 store, HPOS on and off:
 * - WordPress validates the body against the route's schema before anything
 *   else (WP_REST_Request::has_valid_params): a value of the wrong type, a
 *   status outside the enum (`rest_not_in_enum`), a billing email that
 *   is_email() refuses (`rest_invalid_email`; an empty string too, null is
 *   allowed) answer 400 `rest_invalid_param` with `data.params` and
 *   `data.details`, and nothing changes (rest-validation.ts);
 * - billing and shipping merge field by field;
 * - `meta_data` goes through WC_Data::update_meta_data, entry by entry: an
 *   internal key (WC_Order_Data_Store_CPT::$internal_meta_keys) whose setter
 *   exists on WC_Order (`set_` + the key without its underscore) logs a "doing
 *   it wrong" notice (phpNotices()) and changes the order's own field (`_billing_email`, `_payment_method`, `_date_paid` in
 *   Unix seconds, …; `_order_total` too, as the real store showed, although
 *   WC_Order has no setter of that name); an
 *   internal key without a setter (`_paid_date`, `_customer_user`, …) is
 *   stored but never shown in REST reads; an entry with a known `id` is
 *   updated; an entry with an unknown `id` deletes every entry with its key and
 *   is added with a new id; an entry without `id` takes the first entry with
 *   its key and deletes the other ones;
 * - `date_paid`, `date_completed` and their `_gmt` twins are read-only (the
 *   controller drops them); WC_Order::maybe_set_date_paid stamps the paid date
 *   when the status reaches the payment-complete status (`processing`, or
 *   `completed` when no item needs processing), maybe_set_date_completed stamps
 *   the completed date on every change to `completed`;
 * - taxes follow the "calculate tax based on" setting (default: the shipping
 *   address, the billing one when there is no shipping country), are rounded
 *   per line, and apply to lines, shipping and taxable fees, with one tax line
 *   per rate;
 * - a missing order: GET 404 and PUT 400, both "Invalid ID."
 *   (`woocommerce_rest_shop_order_invalid_id`, WC_REST_CRUD_Controller);
 * - refunds: an amount above what remains makes wc_create_refund throw
 *   "Invalid refund amount.", which the refunds controller returns as a
 *   WP_Error whose data is the bare number 500 (so the body says `"data": 500`);
 *   DELETE defaults `force` to true, so a refund is deleted without `?force`,
 *   and looks the refund up by its id alone: one of another order is deleted
 *   before the error is answered;
 * - the companion plugin's routes answer 404 `checkout_bridge_customer_not_found`
 *   and `checkout_bridge_order_not_found` (unknown order, or someone else's);
 * - with the companion plugin, meta `_date_paid` sets the paid date without the notice (includes/paid-date.php).
 *
 * Deliberately left out (nothing the service reads or writes depends on them):
 * - order creation, deletion and batch routes, and line, shipping, fee and
 *   coupon writes (`line_items` and friends are validated as arrays, then ignored);
 * - coupons and discounts (`coupon_lines` is always empty, discounts are zero);
 * - products, stock and SKUs as records (a line carries the product flags and SKU it was seeded with);
 * - the order notes WooCommerce writes by itself (status changes, refunds);
 * - collection filters other than `page`, `per_page` and `_fields` (`status`,
 *   `search`, `after`, `orderby`, …);
 * - a site time zone other than UTC (every `_gmt` date equals its local twin),
 *   and tax amounts finer than the price decimals (WooCommerce keeps line
 *   taxes unrounded in `taxes`);
 * - sanitization after validation (sanitize_text_field on emails, …), the
 *   `currency` enum, `dp` and `context`, and plugins' filters;
 * - `_links` beyond their `href` (WordPress 6.7 adds `targetHints`), `Link`
 *   headers, `_embed`.
 */
import { randomBytes } from 'node:crypto';
import { invalidParams, isEmail, type ArgSchema } from './rest-validation';

export interface WooAddress {
  [field: string]: string;
}

export interface WooMeta {
  id: number;
  key: string;
  value: unknown;
}

export interface WooTax {
  id: number;
  total: string;
  subtotal: string;
}

export interface WooLine {
  id: number;
  name: string;
  product_id: number;
  variation_id: number;
  quantity: number;
  tax_class: string;
  subtotal: string;
  subtotal_tax: string;
  total: string;
  total_tax: string;
  taxes: WooTax[];
  meta_data: WooMeta[];
  sku: string | null;
  global_unique_id: string | null;
  /** The line total divided by the quantity, as a JSON number (WooCommerce divides floats). */
  price: number;
  image: { id: number; src: string };
  parent_name: string | null;
}

export interface WooFeeLine {
  id: number;
  name: string;
  tax_class: string;
  tax_status: 'taxable' | 'none';
  amount: string;
  total: string;
  total_tax: string;
  taxes: WooTax[];
  meta_data: WooMeta[];
}

export interface WooShippingLine {
  id: number;
  method_title: string;
  method_id: string;
  instance_id: string;
  total: string;
  total_tax: string;
  taxes: WooTax[];
  meta_data: WooMeta[];
}

export interface WooTaxLine {
  id: number;
  rate_code: string;
  rate_id: number;
  label: string;
  compound: boolean;
  tax_total: string;
  shipping_tax_total: string;
  rate_percent: number;
  meta_data: WooMeta[];
}

/** An order as GET /orders/<id> shows it (the handler adds `payment_url` and `_links`). */
export interface WooOrder {
  id: number;
  parent_id: number;
  status: string;
  currency: string;
  version: string;
  prices_include_tax: boolean;
  date_created: string;
  date_modified: string;
  discount_total: string;
  discount_tax: string;
  shipping_total: string;
  shipping_tax: string;
  cart_tax: string;
  total: string;
  total_tax: string;
  customer_id: number;
  order_key: string;
  billing: WooAddress;
  shipping: WooAddress;
  payment_method: string;
  payment_method_title: string;
  transaction_id: string;
  customer_ip_address: string;
  customer_user_agent: string;
  created_via: string;
  customer_note: string;
  date_completed: string | null;
  date_paid: string | null;
  cart_hash: string;
  number: string;
  meta_data: WooMeta[];
  line_items: WooLine[];
  tax_lines: WooTaxLine[];
  shipping_lines: WooShippingLine[];
  fee_lines: WooFeeLine[];
  coupon_lines: unknown[];
  /** Newest first, each total negative (WC_REST_Orders_V2_Controller). */
  refunds: { id: number; reason: string; total: string }[];
  is_editable: boolean;
  needs_payment: boolean;
  needs_processing: boolean;
  date_created_gmt: string;
  date_modified_gmt: string;
  date_completed_gmt: string | null;
  date_paid_gmt: string | null;
  currency_symbol: string;
}

/** An order refund as GET /orders/<id>/refunds shows it (amount positive, as a decimal string). */
export interface WooRefund {
  id: number;
  date_created: string;
  date_created_gmt: string;
  amount: string;
  reason: string;
  /** The user the API keys belong to (wc_create_refund: get_current_user_id()). */
  refunded_by: number;
  refunded_payment: boolean;
  meta_data: WooMeta[];
  line_items: unknown[];
  shipping_lines: unknown[];
  tax_lines: unknown[];
  fee_lines: unknown[];
}

/** An order note (GET /orders/<id>/notes). */
export interface WooNote {
  id: number;
  /** "WooCommerce" for a note added by the system (the v3 controller compares with a lowercase "woocommerce"), else the user's display name. */
  author: string;
  date_created: string;
  date_created_gmt: string;
  note: string;
  customer_note: boolean;
}

export interface SeedLine {
  name?: string;
  quantity?: number;
  /** Line total after discounts, as a decimal string. */
  total: string;
  product_id?: number;
  sku?: string;
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

/** One page of a collection and the size of the whole collection (X-WP-Total). */
export interface Page<T> {
  items: T[];
  total: number;
}

/** The companion plugin's payment gateway (companion-gateway.ts). */
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
  private bareData: { value: unknown } | undefined;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /**
   * A WP_Error created with a bare number as its data (`new WP_Error( code, message, 500 )`):
   * rest_convert_error_to_response finds no `status` in it, so WordPress answers 500 and
   * shows the data as it is.
   */
  static withBareData(code: string, message: string, data: unknown): WooError {
    const error = new WooError(500, code, message);
    error.bareData = { value: data };
    return error;
  }

  toJSON(): { code: string; message: string; data: unknown } {
    return { code: this.code, message: this.message, data: this.bareData ? this.bareData.value : { status: this.status, ...this.data } };
  }
}

/** The REST schema's status enum on a stock WooCommerce 10 (WC_REST_Orders_V2_Controller::get_order_statuses). */
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

/** The order status the companion plugin registers (wc-authorized): an authorization awaiting its capture at shipping. */
export const COMPANION_AUTHORIZED_STATUS = 'authorized';

const ADDRESS_FIELDS = ['first_name', 'last_name', 'company', 'address_1', 'address_2', 'city', 'state', 'postcode', 'country'];
const BILLING_FIELDS = [...ADDRESS_FIELDS, 'email', 'phone'];
const SHIPPING_FIELDS = [...ADDRESS_FIELDS, 'phone'];

const stringProps = (fields: string[]): Record<string, ArgSchema> => Object.fromEntries(fields.map((field) => [field, { type: 'string' }]));

/** The writable properties of the v3 order schema, in the schema's order (the order WordPress reports failures in). */
function orderUpdateArgs(statuses: readonly string[]): Record<string, ArgSchema> {
  const items = { type: 'array', items: { type: 'object' } } as const;
  return {
    parent_id: { type: 'integer' },
    created_via: { type: 'string' },
    status: { type: 'string', enum: statuses },
    customer_id: { type: 'integer' },
    customer_note: { type: 'string' },
    billing: { type: 'object', properties: { ...stringProps(BILLING_FIELDS), email: { type: ['string', 'null'], format: 'email' } } },
    shipping: { type: 'object', properties: stringProps(SHIPPING_FIELDS) },
    payment_method: { type: 'string' },
    payment_method_title: { type: 'string' },
    transaction_id: { type: 'string' },
    meta_data: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'integer' }, key: { type: 'string' }, value: { type: 'mixed' } } },
    },
    line_items: items,
    shipping_lines: items,
    fee_lines: items,
    coupon_lines: items,
    set_paid: { type: 'boolean' },
    manual_update: { type: 'boolean' },
  };
}

const REFUND_CREATE_ARGS: Record<string, ArgSchema> = {
  amount: { type: 'string' },
  reason: { type: 'string' },
  refunded_by: { type: 'integer' },
  meta_data: {
    type: 'array',
    items: { type: 'object', properties: { id: { type: 'integer' }, key: { type: 'string' }, value: { type: 'mixed' } } },
  },
  api_refund: { type: 'boolean' },
  api_restock: { type: 'boolean' },
};

const NOTE_CREATE_ARGS: Record<string, ArgSchema> = {
  note: { type: 'string' },
  customer_note: { type: 'boolean' },
  added_by_user: { type: 'boolean' },
};

/** WordPress's 400 for a request that fails has_valid_params. */
function invalidParamError(args: Record<string, ArgSchema>, body: Record<string, unknown>): WooError | undefined {
  const failure = invalidParams(body, args);
  return failure ? new WooError(400, 'rest_invalid_param', failure.message, { params: failure.params, details: failure.details }) : undefined;
}

/** WC_Order_Data_Store_CPT::$internal_meta_keys (WooCommerce's REST reads hide them with HPOS too). */
const INTERNAL_META_KEYS = new Set([
  '_customer_user',
  '_order_key',
  '_order_currency',
  ...BILLING_FIELDS.map((field) => `_billing_${field}`),
  ...SHIPPING_FIELDS.map((field) => `_shipping_${field}`),
  '_completed_date',
  '_paid_date',
  '_edit_lock',
  '_edit_last',
  '_cart_discount',
  '_cart_discount_tax',
  '_order_shipping',
  '_order_shipping_tax',
  '_order_tax',
  '_order_total',
  '_payment_method',
  '_payment_method_title',
  '_transaction_id',
  '_customer_ip_address',
  '_customer_user_agent',
  '_created_via',
  '_order_version',
  '_prices_include_tax',
  '_date_completed',
  '_date_paid',
  '_payment_tokens',
  '_billing_address_index',
  '_shipping_address_index',
  '_recorded_sales',
  '_recorded_coupon_usage_counts',
  '_download_permissions_granted',
  '_order_stock_reduced',
  '_new_order_email_sent',
]);

/** The notice wc_doing_it_wrong() writes to the PHP error log (WP_DEBUG on), as a real 10.0.2 store logged it, backtrace left out. */
export const doingItWrongNotice = (key: string) =>
  `is_internal_meta_key was called incorrectly. Generic add/update/get meta methods should not be used for internal meta data, including "${key}". Use getters and setters.`;

/** wc_string_to_bool(). */
const wcBool = (value: unknown): boolean => value === true || value === 1 || (typeof value === 'string' && ['1', 'yes', 'true'].includes(value.toLowerCase()));
const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));

/**
 * Internal meta keys WC_Data::update_meta_data hands to a WC_Order setter (`set_` + the key without
 * its underscore) whose field the REST order shows. Setters of fields REST does not show
 * (`set_recorded_sales`, …) are kept aside with the hidden meta.
 */
function metaSetter(model: WooCommerceModel, key: string): ((order: WooOrder, value: unknown) => void) | undefined {
  for (const [part, fields] of [
    ['billing', BILLING_FIELDS],
    ['shipping', SHIPPING_FIELDS],
  ] as const) {
    const field = key.startsWith(`_${part}_`) ? key.slice(part.length + 2) : undefined;
    if (field === undefined || !fields.includes(field)) continue;
    if (part === 'billing' && field === 'email') {
      return (order, value) => {
        // WC_Order::set_billing_email throws a WC_Data_Exception, which save_object answers with its 400.
        if (value && !isEmail(text(value))) throw new WooError(400, 'order_invalid_billing_email', 'Invalid billing email address');
        order.billing.email = text(value);
      };
    }
    return (order, value) => {
      order[part][field] = text(value);
    };
  }
  const plain: Partial<Record<string, keyof WooOrder>> = {
    _order_key: 'order_key',
    _payment_method_title: 'payment_method_title',
    _transaction_id: 'transaction_id',
    _customer_ip_address: 'customer_ip_address',
    _customer_user_agent: 'customer_user_agent',
    _created_via: 'created_via',
  };
  const field = plain[key];
  if (field) {
    return (order, value) => {
      (order as unknown as Record<string, unknown>)[field] = text(value);
    };
  }
  switch (key) {
    case '_payment_method':
      // set_payment_method( '' ) clears the title too.
      return (order, value) => {
        order.payment_method = text(value);
        if (order.payment_method === '') order.payment_method_title = '';
      };
    case '_prices_include_tax':
      return (order, value) => {
        order.prices_include_tax = wcBool(value);
      };
    // set_date_paid() / set_date_completed(): a number is a Unix timestamp, a string an ISO 8601 date (WC_Data::set_date_prop).
    case '_date_paid':
      return (order, value) => {
        order.date_paid = wooDate(value);
        order.date_paid_gmt = order.date_paid;
      };
    case '_date_completed':
      return (order, value) => {
        order.date_completed = wooDate(value);
        order.date_completed_gmt = order.date_completed;
      };
    // Observed on a real 10.0.2 store (HPOS on and off): the meta entry sets the order's total.
    case '_order_total':
      return (order, value) => {
        order.total = model.formatAmount(order.currency, text(value));
      };
    default:
      return undefined;
  }
}

/** The symbols get_woocommerce_currency_symbol() gives, decoded as the REST response has them. */
const CURRENCY_SYMBOLS: Record<string, string> = {
  USD: '$',
  CAD: '$',
  AUD: '$',
  EUR: '€',
  GBP: '£',
  JPY: '¥',
  CHF: 'CHF',
  KWD: 'د.ك',
  BHD: '.د.ب',
  JOD: 'د.ا',
  OMR: 'ر.ع.',
  TND: 'د.ت',
};

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

/** wc_generate_order_key(): "wc_order_" and 13 letters and digits (wp_generate_password without specials). */
function orderKey(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return `wc_order_${[...randomBytes(13)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
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
  /** The WordPress user the API keys belong to (refunds' `refunded_by`, notes added by the user). */
  apiUser?: { id: number; displayName: string };
  now?: () => Date;
}

const PACKAGES_META = '_shipment_packages';
const TRACKING_ITEMS_META = '_wc_shipment_tracking_items';

/** The plugin's route arguments, as register_rest_route validates them. */
const MERGE_PACKAGE_ARGS: Record<string, ArgSchema> = {
  package: {
    type: 'object',
    properties: {
      key: { type: 'string' },
      tracking_number: { type: 'string' },
      carrier: { type: 'string' },
      ship_date: { type: 'string' },
      voided: { type: 'boolean' },
    },
  },
  note_line: { type: 'string' },
  tracking_item: { type: 'object' },
  remove_tracking_id: { type: 'string' },
  ship: { type: 'object', properties: { from: { type: 'string' }, status: { type: 'string' }, customer_note: { type: 'string' }, meta: { type: 'object' } } },
};

/** checkout_cart_bridge_read_packages: a JSON list of packages, or undefined when the value is not one (never "none"). */
function readPackages(raw: unknown): Record<string, unknown>[] | undefined {
  if (raw === undefined || raw === '') return [];
  let list: unknown;
  try {
    list = typeof raw === 'string' ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
  if (!Array.isArray(list)) return undefined;
  const entries = list.filter((entry): entry is Record<string, unknown> => entry !== null && typeof entry === 'object' && !Array.isArray(entry) && typeof entry.key === 'string');
  return entries.length === list.length ? entries : undefined;
}

/** How many restore keys the companion plugin remembers per customer (checkout-cart-bridge.php). */
export const CART_RESTORE_KEYS_KEPT = 20;

export class WooCommerceModel {
  readonly orders = new Map<number, WooOrder>();
  /** Customers' persistent carts, for the companion plugin's routes. */
  readonly carts = new Map<number, { product_id: number; quantity: number }[]>();
  /** Registered customers (GET /customers/<id>); orders refer to them by customer_id. */
  readonly customers = new Map<number, WooCustomer>();
  /** The plugin's per-customer memory of keyed restores (restore key → items restored), oldest first. */
  readonly cartRestoreKeys = new Map<number, Map<string, number>>();
  /** The companion plugin: its routes, and the `authorized` status it registers. */
  cartBridgeInstalled = true;
  readonly version = '10.0.2';

  /** The companion plugin's gateway, when the shop has it configured: refunds that ask for the money back go to it. */
  gateway: RefundGateway | undefined;
  private nextMetaId = 1000;
  private readonly statuses: Set<string>;
  /** The shop's settings; tests change them as a shop owner would in wp-admin. */
  readonly settings: WooModelOptions;
  /** Product flags of each order line, by line id (products are not part of the order resource). */
  private readonly lineProducts = new Map<number, { virtual: boolean; downloadable: boolean }>();
  /** Refunds by order id, oldest first. */
  readonly refunds = new Map<number, WooRefund[]>();
  /** Order notes by order id, oldest first. */
  readonly notes = new Map<number, WooNote[]>();
  private nextRefundId = 5000;
  private nextNoteId = 7000;
  /** Internal meta the REST API never shows (`_paid_date`), by order id. */
  private readonly hiddenMeta = new Map<number, Record<string, unknown>>();
  private readonly noticeLog: string[] = [];

  constructor(options: WooModelOptions = {}) {
    this.settings = { ...options };
    this.statuses = new Set([...STOCK_ORDER_STATUSES, ...(options.customStatuses ?? [])]);
  }

  private now(): Date {
    return this.settings.now?.() ?? new Date();
  }

  private get apiUser(): { id: number; displayName: string } {
    return this.settings.apiUser ?? { id: 1, displayName: 'shop-admin' };
  }

  private decimals(currency: string): number {
    if (this.settings.decimalsFor) return this.settings.decimalsFor(currency);
    const code = currency.toUpperCase();
    if (['JPY', 'KRW', 'VND', 'CLP'].includes(code)) return 0;
    if (['KWD', 'BHD', 'JOD', 'OMR', 'TND'].includes(code)) return 3;
    return 2;
  }

  /** wc_format_decimal() to the currency's price decimals; anything that is not a decimal becomes zero. */
  formatAmount(currency: string, value: string): string {
    const d = this.decimals(currency);
    return /^[+-]?\d+(\.\d+)?$/.test(value.trim()) ? fromUnits(toUnits(value.trim(), d), d) : fromUnits(0n, d);
  }

  /** What a plugin's register_post_status + wc_order_statuses filter does. */
  addStatus(status: string): void {
    this.statuses.add(status);
  }

  removeStatus(status: string): void {
    this.statuses.delete(status);
  }

  /**
   * The REST status enum: the registered statuses, and the companion plugin's `authorized` right
   * after `on-hold` while the plugin is installed (includes/order-status.php).
   */
  get registeredStatuses(): string[] {
    const statuses = [...this.statuses];
    if (!this.cartBridgeInstalled || statuses.includes(COMPANION_AUTHORIZED_STATUS)) return statuses;
    const at = statuses.indexOf('on-hold');
    return at < 0 ? [...statuses, COMPANION_AUTHORIZED_STATUS] : [...statuses.slice(0, at + 1), COMPANION_AUTHORIZED_STATUS, ...statuses.slice(at + 1)];
  }

  seed(seed: SeedOrder): WooOrder {
    const currency = seed.currency ?? 'USD';
    const decimals = this.decimals(currency);
    const zero = fromUnits(0n, decimals);
    const created = formatWooDate(this.now());
    const lines = (seed.lines ?? [{ total: '10.00' }]).map((line, index): WooLine => {
      const id = seed.id * 100 + index + 1;
      const quantity = line.quantity ?? 1;
      this.lineProducts.set(id, { virtual: line.virtual ?? false, downloadable: line.downloadable ?? false });
      return {
        id,
        name: line.name ?? `Item ${index + 1}`,
        product_id: line.product_id ?? 500 + index,
        variation_id: 0,
        quantity,
        tax_class: '',
        subtotal: line.total,
        subtotal_tax: zero,
        total: line.total,
        total_tax: zero,
        taxes: [],
        meta_data: [],
        sku: line.sku ?? '',
        global_unique_id: '',
        price: quantity ? Number(line.total) / quantity : 0,
        image: { id: 0, src: '' },
        parent_name: null,
      };
    });
    const shippingTotal = seed.shipping_total ?? zero;
    const datePaid = seed.date_paid ?? null;
    const order: WooOrder = {
      id: seed.id,
      parent_id: 0,
      status: seed.status ?? 'pending',
      currency,
      version: this.version,
      prices_include_tax: false,
      date_created: created,
      date_modified: created,
      discount_total: zero,
      discount_tax: zero,
      shipping_total: shippingTotal,
      shipping_tax: zero,
      cart_tax: seed.total_tax ?? zero,
      total: '',
      total_tax: seed.total_tax ?? zero,
      customer_id: seed.customer_id ?? 0,
      order_key: orderKey(),
      billing: { ...emptyAddress(BILLING_FIELDS), ...seed.billing },
      shipping: { ...emptyAddress(SHIPPING_FIELDS), ...seed.shipping },
      payment_method: '',
      payment_method_title: '',
      transaction_id: '',
      customer_ip_address: '',
      customer_user_agent: '',
      created_via: 'checkout',
      customer_note: seed.customer_note ?? '',
      date_completed: null,
      date_paid: datePaid,
      cart_hash: '',
      number: String(seed.id),
      meta_data: (seed.meta_data ?? []).map((m) => ({ id: this.nextMetaId++, key: m.key, value: m.value })),
      line_items: lines,
      tax_lines: [],
      shipping_lines:
        toUnits(shippingTotal, decimals) === 0n
          ? []
          : [
              {
                id: seed.id * 100 + 90,
                method_title: 'Flat rate',
                method_id: 'flat_rate',
                instance_id: '1',
                total: shippingTotal,
                total_tax: zero,
                taxes: [],
                meta_data: [],
              },
            ],
      fee_lines: (seed.fees ?? []).map((fee, index) => ({
        id: seed.id * 100 + 50 + index,
        name: fee.name ?? `Fee ${index + 1}`,
        tax_class: '',
        tax_status: fee.taxable === false ? ('none' as const) : ('taxable' as const),
        amount: fee.total,
        total: fee.total,
        total_tax: zero,
        taxes: [],
        meta_data: [],
      })),
      coupon_lines: [],
      refunds: [],
      is_editable: false,
      needs_payment: false,
      needs_processing: false,
      date_created_gmt: created,
      date_modified_gmt: created,
      date_completed_gmt: null,
      date_paid_gmt: datePaid,
      currency_symbol: '',
    };
    order.total = seed.total ?? this.sumTotal(order);
    this.orders.set(order.id, order);
    // A registered customer's order: the customer exists in WordPress.
    if (order.customer_id > 0 && !this.customers.has(order.customer_id)) {
      this.seedCustomer({ id: order.customer_id, email: order.billing.email || `customer${order.customer_id}@example.com` });
    }
    return this.get(order.id);
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
    const rates = this.settings.taxRates;
    if (rates) {
      const d = this.decimals(order.currency);
      const country = this.taxCountry(order);
      const rate = rates[country] ?? 0;
      // A rate id per configured country, as the shop's tax table would number them.
      const rateId = Object.keys(rates).indexOf(country) + 1;
      const rateMicro = BigInt(Math.round(rate * 10_000));
      const taxesOf = (tax: bigint): WooTax[] => (rate > 0 ? [{ id: rateId, total: fromUnits(tax, d), subtotal: fromUnits(tax, d) }] : []);
      let cartTax = 0n;
      for (const line of order.line_items) {
        const tax = lineTax(toUnits(line.total, d), rateMicro);
        line.total_tax = fromUnits(tax, d);
        line.subtotal_tax = line.total_tax;
        line.taxes = taxesOf(tax);
        cartTax += tax;
      }
      for (const fee of order.fee_lines) {
        const tax = fee.tax_status === 'taxable' ? lineTax(toUnits(fee.total, d), rateMicro) : 0n;
        fee.total_tax = fromUnits(tax, d);
        fee.taxes = fee.tax_status === 'taxable' ? taxesOf(tax) : [];
        cartTax += tax;
      }
      const shippingTax = lineTax(toUnits(order.shipping_total, d), rateMicro);
      for (const line of order.shipping_lines) {
        line.total_tax = fromUnits(shippingTax, d);
        line.taxes = taxesOf(shippingTax);
      }
      order.cart_tax = fromUnits(cartTax, d);
      order.shipping_tax = fromUnits(shippingTax, d);
      order.total_tax = fromUnits(cartTax + shippingTax, d);
      order.tax_lines =
        rate > 0
          ? [
              {
                id: order.id * 100 + 80,
                rate_code: `${country}-TAX-1`,
                rate_id: rateId,
                label: 'Tax',
                compound: false,
                tax_total: order.cart_tax,
                shipping_tax_total: order.shipping_tax,
                rate_percent: rate,
                meta_data: [],
              },
            ]
          : [];
    }
    order.total = this.sumTotal(order);
  }

  /** The order's taxes were it shipped to `shipping` with one shipping line of `shippingTotal`; nothing is stored. */
  taxesAt(id: number, shipping: WooAddress, shippingTotal: string): { cartTax: string; shippingTax: string } {
    const order = structuredClone(this.orders.get(id)!);
    Object.assign(order.shipping, shipping);
    order.shipping_total = shippingTotal;
    this.recalculate(order);
    return { cartTax: order.cart_tax, shippingTax: order.shipping_tax };
  }

  /** WC_Order::needs_processing: some item is not both virtual and downloadable. */
  needsProcessing(order: Pick<WooOrder, 'line_items'>): boolean {
    return order.line_items.some((line) => {
      const product = this.lineProducts.get(line.id);
      return !(product?.virtual && product.downloadable);
    });
  }

  /** WC_Order::maybe_set_date_paid and maybe_set_date_completed, run when the status changes. */
  private stampStatusDates(order: WooOrder): void {
    const stamp = formatWooDate(this.now());
    if (!order.date_paid) {
      const paymentCompleteStatus = this.needsProcessing(order) ? 'processing' : 'completed';
      const reached =
        order.status === paymentCompleteStatus || (paymentCompleteStatus === 'processing' && order.status === 'completed');
      if (reached) {
        order.date_paid = stamp;
        order.date_paid_gmt = stamp;
      }
    }
    if (order.status === 'completed') {
      order.date_completed = stamp;
      order.date_completed_gmt = stamp;
    }
  }

  /** The fields WooCommerce computes on every read. */
  private withComputedFields(order: WooOrder): WooOrder {
    const d = this.decimals(order.currency);
    const view = structuredClone(order);
    view.refunds = [...(this.refunds.get(order.id) ?? [])]
      .reverse()
      .map((refund) => ({ id: refund.id, reason: refund.reason, total: `-${refund.amount}` }));
    // WC_Order::is_editable, needs_payment (pending or failed, with something to pay), needs_processing.
    view.is_editable = ['pending', 'on-hold', 'auto-draft'].includes(order.status);
    view.needs_payment = ['pending', 'failed'].includes(order.status) && toUnits(order.total, d) > 0n;
    view.needs_processing = this.needsProcessing(order);
    view.currency_symbol = CURRENCY_SYMBOLS[order.currency.toUpperCase()] ?? order.currency;
    return view;
  }

  get(id: number): WooOrder {
    const order = this.orders.get(id);
    if (!order) throw new WooError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    return this.withComputedFields(order);
  }

  /** GET /orders: newest first (`orderby=date`, then id), `per_page` at a time. */
  listOrders(page: number, perPage: number): Page<WooOrder> {
    const all = [...this.orders.values()].sort((a, b) => b.date_created.localeCompare(a.date_created) || b.id - a.id);
    return { items: all.slice((page - 1) * perPage, page * perPage).map((order) => this.get(order.id)), total: all.length };
  }

  /** The store's PHP error log: the "doing it wrong" notices its writes caused, oldest first. */
  phpNotices(): string[] {
    return [...this.noticeLog];
  }

  /** Internal meta the REST API hides (e.g. `_paid_date`), for tests that check it was written. */
  hiddenMetaOf(id: number): Record<string, unknown> {
    return { ...this.hiddenMeta.get(id) };
  }

  update(id: number, body: Record<string, unknown>): WooOrder {
    // WordPress validates the request against the schema before the controller looks the order up.
    const invalid = invalidParamError(orderUpdateArgs(this.registeredStatuses), body);
    if (invalid) throw invalid;
    const stored = this.orders.get(id);
    if (!stored) throw new WooError(400, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    const order = structuredClone(stored);
    let addressChanged = false;

    if (typeof body.parent_id === 'number') order.parent_id = body.parent_id;
    for (const [part, fields] of [
      ['billing', BILLING_FIELDS],
      ['shipping', SHIPPING_FIELDS],
    ] as const) {
      const incoming = body[part];
      if (incoming !== undefined && incoming !== null) {
        const entries = typeof incoming === 'object' ? Object.entries(incoming as Record<string, unknown>) : [];
        for (const [field, value] of entries) {
          if (fields.includes(field)) order[part][field] = text(value);
        }
        addressChanged = true;
      }
    }
    for (const field of ['customer_note', 'payment_method', 'payment_method_title', 'transaction_id'] as const) {
      if (typeof body[field] === 'string') order[field] = body[field] as string;
    }
    if (typeof body.customer_id === 'number') order.customer_id = body.customer_id;
    // The read-only dates (date_paid, date_completed and their _gmt twins) are never passed on by the controller.

    if (Array.isArray(body.meta_data)) this.writeMeta(order, body.meta_data as unknown[]);

    // save_object: the customer must exist.
    if (typeof body.customer_id === 'number' && body.customer_id !== 0 && !this.customers.has(body.customer_id)) {
      throw new WooError(400, 'woocommerce_rest_invalid_customer_id', 'Customer ID is invalid.');
    }
    // save_object recalculates totals and taxes when shipping lines are sent, as for an address.
    const shippingLinesSent = Array.isArray(body.shipping_lines);
    if (shippingLinesSent) writeShippingLines(this, order, body.shipping_lines as unknown[]);
    if (addressChanged || shippingLinesSent) this.recalculate(order);
    // The controller sets the status last, "so transitions have new data" (after meta such as _date_paid).
    if (typeof body.status === 'string' && body.status !== '' && body.status !== order.status) {
      order.status = body.status;
      this.stampStatusDates(order);
    }
    order.date_modified = formatWooDate(this.now());
    order.date_modified_gmt = order.date_modified;
    this.orders.set(id, order);
    return this.get(id);
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

  /** GET /orders/<id>/refunds: newest first, a page at a time; an unknown order simply has none (no error). */
  listRefunds(id: number, page = 1, perPage = 10): Page<WooRefund> {
    const all = [...(this.refunds.get(id) ?? [])].reverse();
    return { items: structuredClone(all.slice((page - 1) * perPage, page * perPage)), total: all.length };
  }

  /** The order a refund belongs to, wherever it is (the refunds controller looks refunds up by id alone). */
  private findRefund(refundId: number): { orderId: number; refund: WooRefund } | undefined {
    for (const [orderId, list] of this.refunds) {
      const refund = list.find((r) => r.id === refundId);
      if (refund) return { orderId, refund };
    }
    return undefined;
  }

  /**
   * A database restart: MySQL before 8.0 sets InnoDB's AUTO_INCREMENT to the largest id + 1 when it
   * starts, so the id of a refund deleted last (one WooCommerce dropped) is handed out again.
   */
  restartDatabase(): void {
    const ids = [...this.refunds.values()].flat().map((refund) => refund.id);
    this.nextRefundId = Math.max(4999, ...ids) + 1;
  }

  /** Moves a refund's creation back in time (tests of a refund WooCommerce may still drop). */
  backdateRefund(refundId: number, ms: number): void {
    const found = this.findRefund(refundId);
    if (!found) return;
    const created = formatWooDate(new Date(Date.parse(`${found.refund.date_created_gmt}Z`) - ms));
    found.refund.date_created = created;
    found.refund.date_created_gmt = created;
  }

  /**
   * GET /orders/<id>/refunds/<refund_id>. An unknown refund is a 404; one of another order (or of a
   * missing order) is a WP_Error with the bare data 404, which WordPress answers with 500.
   */
  getRefund(id: number, refundId: number): WooRefund {
    const found = this.findRefund(refundId);
    if (!found) throw new WooError(404, 'woocommerce_rest_shop_order_refund_invalid_id', 'Invalid ID.');
    if (!this.orders.has(id)) throw WooError.withBareData('woocommerce_rest_invalid_order_id', 'Invalid order ID.', 404);
    if (found.orderId !== id) throw WooError.withBareData('woocommerce_rest_invalid_order_refund_id', 'Invalid order refund ID.', 404);
    return structuredClone(found.refund);
  }

  /**
   * POST /orders/<id>/refunds as WC_REST_Order_Refunds_Controller and wc_create_refund do it. The
   * controller returns its own errors as WP_Errors whose data is a bare number (404, 400, 500), so
   * WordPress answers them all with 500 and shows that number as `data`: a missing order, a negative
   * amount, an amount above what remains ("Invalid refund amount."), and `api_refund` (default true)
   * asking the order's gateway, which this stand-in has none of, to pay the money back. A refund
   * that leaves nothing to refund marks the order `refunded` (wc_order_fully_refunded).
   */
  createRefund(id: number, body: Record<string, unknown>): WooRefund {
    const invalid = invalidParamError(REFUND_CREATE_ARGS, body);
    if (invalid) throw invalid;
    const order = this.orders.get(id);
    if (!order) throw WooError.withBareData('woocommerce_rest_invalid_order_id', 'Invalid order ID.', 404);
    const raw = typeof body.amount === 'string' ? body.amount.trim() : '0';
    if (/^-\d*\.?\d+$/.test(raw) && Number(raw) < 0) {
      throw WooError.withBareData('woocommerce_rest_invalid_order_refund', 'Refund amount must be greater than zero.', 400);
    }
    const invalidAmount = () => WooError.withBareData('woocommerce_rest_cannot_create_order_refund', 'Invalid refund amount.', 500);
    if (!/^\+?(\d+(\.\d+)?|\.\d+)$/.test(raw)) throw invalidAmount();
    const amount = this.units(order, raw.replace(/^\+/, '').replace(/^\./, '0.'));
    if (amount > this.units(order, this.remainingRefund(id))) throw invalidAmount();
    if (body.api_refund === undefined || body.api_refund === true || body.api_refund === 'true' || body.api_refund === '1') {
      throw WooError.withBareData('woocommerce_rest_cannot_create_order_refund', 'The payment gateway for this order does not exist.', 500);
    }
    const created = formatWooDate(this.now());
    const refund: WooRefund = {
      id: this.nextRefundId++,
      date_created: created,
      date_created_gmt: created,
      amount: fromUnits(amount, this.decimals(order.currency)),
      reason: typeof body.reason === 'string' ? body.reason : '',
      refunded_by: this.apiUser.id,
      refunded_payment: false,
      meta_data: (Array.isArray(body.meta_data) ? body.meta_data : [])
        .filter((m): m is { key: string; value: unknown } => typeof m === 'object' && m !== null && typeof (m as { key?: unknown }).key === 'string')
        .map((m) => ({ id: this.nextMetaId++, key: m.key, value: m.value })),
      line_items: [],
      shipping_lines: [],
      tax_lines: [],
      fee_lines: [],
    };
    this.refunds.set(id, [...(this.refunds.get(id) ?? []), refund]);
    if (this.units(order, this.remainingRefund(id)) <= 0n) {
      order.status = 'refunded';
      order.date_modified = formatWooDate(this.now());
      order.date_modified_gmt = order.date_modified;
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
      throw WooError.withBareData('woocommerce_rest_cannot_create_order_refund', 'The payment gateway for this order does not exist.', 500);
    }
    const statusBefore = order.status;
    const created = this.createRefund(id, { ...body, api_refund: false });
    order.status = statusBefore;
    const result = await gateway.processRefund(id, created.id, created.amount, created.reason);
    const list = this.refunds.get(id) ?? [];
    if (!result.ok) {
      this.refunds.set(id, list.filter((r) => r.id !== created.id));
      throw WooError.withBareData('woocommerce_rest_cannot_create_order_refund', result.error, 500);
    }
    const refund = list.find((r) => r.id === created.id)!;
    refund.refunded_payment = true;
    for (const [key, value] of Object.entries(result.meta)) refund.meta_data.push({ id: this.nextMetaId++, key, value });
    if (this.units(order, this.remainingRefund(id)) <= 0n) order.status = 'refunded';
    return structuredClone(refund);
  }

  /**
   * DELETE /orders/<id>/refunds/<refund_id>: `force` defaults to true on this route (refunds cannot be
   * trashed, so `force=false` is 501). WC_REST_CRUD_Controller::delete_item looks the refund up by its
   * id alone and deletes it before the response is checked, so a refund of another order (or of a
   * missing one) is deleted all the same, and the answer is a 500 with the bare data 404.
   */
  deleteRefund(id: number, refundId: number, force: boolean): WooRefund {
    const found = this.findRefund(refundId);
    if (!found) throw new WooError(404, 'woocommerce_rest_shop_order_refund_invalid_id', 'Invalid ID.');
    if (!force) throw new WooError(501, 'woocommerce_rest_trash_not_supported', 'The shop_order_refund does not support trashing.');
    const list = this.refunds.get(found.orderId) ?? [];
    this.refunds.set(
      found.orderId,
      list.filter((r) => r.id !== refundId),
    );
    if (!this.orders.has(id)) throw WooError.withBareData('woocommerce_rest_invalid_order_id', 'Invalid order ID.', 404);
    if (found.orderId !== id) throw WooError.withBareData('woocommerce_rest_invalid_order_refund_id', 'Invalid order refund ID.', 404);
    return structuredClone(found.refund);
  }

  /**
   * POST /orders/<id>/notes (WC_REST_Order_Notes_Controller): `note` is a required argument, so WordPress
   * refuses a request without it; `customer_note` (default false) also emails the customer;
   * `added_by_user` attributes the note to the API keys' user instead of the system.
   */
  addNote(id: number, body: Record<string, unknown>): WooNote {
    if (body.note === undefined || body.note === null) {
      throw new WooError(400, 'rest_missing_callback_param', 'Missing parameter(s): note', { params: ['note'] });
    }
    const invalid = invalidParamError(NOTE_CREATE_ARGS, body);
    if (invalid) throw invalid;
    if (!this.orders.has(id)) throw new WooError(404, 'woocommerce_rest_order_invalid_id', 'Invalid order ID.');
    const created = formatWooDate(this.now());
    const byUser = body.added_by_user === true || body.added_by_user === 'true' || body.added_by_user === '1';
    const note: WooNote = {
      id: this.nextNoteId++,
      author: byUser ? this.apiUser.displayName : 'WooCommerce',
      date_created: created,
      date_created_gmt: created,
      note: String(body.note),
      customer_note: body.customer_note === true || body.customer_note === 'true' || body.customer_note === '1',
    };
    this.notes.set(id, [...(this.notes.get(id) ?? []), note]);
    return structuredClone(note);
  }

  /** GET /orders/<id>/notes: newest first, `type` any, customer or internal (WC_REST_Order_Notes_V2_Controller). */
  listNotes(id: number, type = 'any'): WooNote[] {
    const invalid = invalidParamError({ type: { type: 'string', enum: ['any', 'customer', 'internal'] } }, { type });
    if (invalid) throw invalid;
    if (!this.orders.has(id)) throw new WooError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid order ID.');
    const notes = [...(this.notes.get(id) ?? [])].reverse().filter((note) => type === 'any' || note.customer_note === (type === 'customer'));
    return structuredClone(notes);
  }

  /** WC_REST_Orders_V2_Controller: `$order->update_meta_data( key, value, id ?? '' )` for each entry, then save. */
  private writeMeta(order: WooOrder, entries: unknown[]): void {
    // null values are deletions, carried out at save (WC_Data::save_meta_data); new entries get their id then.
    const meta: { id: number | undefined; key: string; value: unknown }[] = order.meta_data.map((m) => ({ ...m }));
    for (const raw of entries) {
      if (!raw || typeof raw !== 'object') continue;
      const { id, key, value } = raw as { id?: unknown; key?: unknown; value?: unknown };
      if (typeof key !== 'string' || key === '') continue;
      if (INTERNAL_META_KEYS.has(key)) {
        const setter = metaSetter(this, key);
        if (setter) {
          // WC_Data::is_internal_meta_key: a key with a setter logs the notice, then the setter stores the value anyway.
          // The companion plugin (includes/paid-date.php) takes `_date_paid` out first and calls the setter itself.
          if (!(key === '_date_paid' && this.cartBridgeInstalled)) this.noticeLog.push(doingItWrongNotice(key));
          setter(order, value);
        } else this.hiddenMeta.set(order.id, { ...this.hiddenMeta.get(order.id), [key]: value });
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

  /**
   * Companion plugin: POST …/customers/<id>/cart/restore {order_id, restore_key?}. A key the plugin
   * already restored for (it keeps the customer's last CART_RESTORE_KEYS_KEPT) is answered with the
   * first answer and `replayed: true`, the cart left as it is.
   */
  restoreCart(customerId: number, orderId: number, restoreKey?: string): { restored: true; items: number; replayed?: true } {
    this.requireBridge();
    this.requireCustomer(customerId);
    const order = this.orders.get(orderId);
    if (!order || order.customer_id !== customerId) {
      throw new WooError(404, 'checkout_bridge_order_not_found', 'Order not found for this customer.');
    }
    const keys = this.cartRestoreKeys.get(customerId) ?? new Map<string, number>();
    const earlier = restoreKey === undefined ? undefined : keys.get(restoreKey);
    if (earlier !== undefined) return { restored: true, items: earlier, replayed: true };
    const items = order.line_items.map((line) => ({ product_id: line.product_id, quantity: line.quantity }));
    this.carts.set(customerId, items);
    if (restoreKey !== undefined) {
      keys.set(restoreKey, items.length);
      for (const oldest of [...keys.keys()].slice(0, Math.max(0, keys.size - CART_RESTORE_KEYS_KEPT))) keys.delete(oldest);
      this.cartRestoreKeys.set(customerId, keys);
    }
    return { restored: true, items: items.length };
  }

  /**
   * Companion plugin: POST …/orders/<id>/shipment-packages (includes/shipment-packages.php). Runs to the
   * end without yielding, as the plugin runs under its database lock: concurrent calls each see the other's package.
   */
  mergeShipmentPackage(id: number, body: Record<string, unknown>): { added: boolean; shipped: boolean; status: string; packages: Record<string, unknown>[] } {
    this.requireBridge();
    if (body.package === undefined) throw new WooError(400, 'rest_missing_callback_param', 'Missing parameter(s): package', { params: ['package'] });
    const invalid = invalidParamError(MERGE_PACKAGE_ARGS, body);
    if (invalid) throw invalid;
    const key = (body.package as Record<string, unknown>).key;
    if (typeof key !== 'string' || key.length < 1 || key.length > 255) {
      const message = key === undefined ? 'key is a required property of package.' : 'package[key] must be between 1 (inclusive) and 255 (inclusive) characters long.';
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): package', { params: { package: message } });
    }
    const stored = this.orders.get(id);
    if (!stored) throw new WooError(404, 'checkout_bridge_order_not_found', 'Order not found.');
    const order = structuredClone(stored);
    const metaOf = (key: string) => order.meta_data.filter((m) => m.key === key).map((m) => m.value);
    const read = readPackages(metaOf(PACKAGES_META)[0]);
    const answer = (added: boolean, shipped = false) => ({ added, shipped, status: this.orders.get(id)!.status, packages: read ?? [] });
    const items = () => (Array.isArray(metaOf(TRACKING_ITEMS_META)[0]) ? (metaOf(TRACKING_ITEMS_META)[0] as unknown[]) : []);
    const withItem = (item: { tracking_id?: unknown } | undefined): { key: string; value: unknown }[] => {
      if (!item || typeof item !== 'object' || item.tracking_id === undefined) return [];
      const list = items().filter((i) => i !== null && typeof i === 'object');
      return list.some((i) => (i as { tracking_id?: unknown }).tracking_id === item.tracking_id) ? [] : [{ key: TRACKING_ITEMS_META, value: [...list, item] }];
    };
    const ship = body.ship as { from: string; status: string; customer_note?: string; meta?: Record<string, unknown> } | undefined;
    if (ship && (typeof ship.from !== 'string' || typeof ship.status !== 'string')) {
      throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): ship', { params: { ship: `${typeof ship.from !== 'string' ? 'from' : 'status'} is a required property of ship.` } });
    }
    if (ship) {
      if (!this.registeredStatuses.includes(ship.status)) {
        throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): ship', { params: { ship: 'ship[status] is not a registered order status.' } });
      }
      if (order.status === ship.from) {
        const meta = Object.entries(ship.meta ?? {}).map(([key, value]) => ({ key, value }));
        this.writeMeta(order, [...meta, ...withItem(body.tracking_item as { tracking_id?: unknown } | undefined)]);
        order.customer_note = ship.customer_note ?? '';
        order.status = ship.status;
        this.stampStatusDates(order);
        this.save(id, order);
        return answer(true, true);
      }
      if (!['shipped', 'completed'].includes(order.status)) return answer(false);
    }
    const packages = read;
    if (!packages) throw new WooError(409, 'checkout_bridge_packages_unreadable', "The order's shipment packages are not readable; nothing was changed.");
    const given = body.package as Record<string, unknown>;
    const entry: Record<string, unknown> = {
      key: given.key,
      tracking_number: text(given.tracking_number ?? ''),
      carrier: text(given.carrier ?? ''),
      ship_date: text(given.ship_date ?? ''),
    };
    const index = packages.findIndex((p) => p.key === entry.key);
    const writes: { key: string; value: unknown }[] = [];
    if (given.voided === true) {
      if (index >= 0 && packages[index]!.voided) return answer(false);
      if (index < 0) packages.push({ ...entry, voided: true });
      else packages[index] = { ...packages[index], voided: true };
      if (typeof body.remove_tracking_id === 'string' && body.remove_tracking_id !== '') {
        const remove = body.remove_tracking_id;
        writes.push({ key: TRACKING_ITEMS_META, value: items().filter((item) => (item as { tracking_id?: unknown })?.tracking_id !== remove) });
      }
    } else {
      const tracking = entry.tracking_number;
      const held =
        index >= 0 ||
        (tracking !== '' && packages.some((p) => p.tracking_number === tracking && !p.voided)) ||
        (tracking !== '' && metaOf('_tracking_number').some((value) => String(value) === tracking));
      if (held) return answer(false);
      packages.push(entry);
      if (typeof body.note_line === 'string' && body.note_line !== '') {
        order.customer_note = order.customer_note === '' ? body.note_line : `${order.customer_note}\n${body.note_line}`;
      }
      writes.push(...withItem(body.tracking_item as { tracking_id?: unknown } | undefined));
    }
    // wp_json_encode with JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE: what JSON.stringify writes.
    this.writeMeta(order, [...writes, { key: PACKAGES_META, value: JSON.stringify(packages) }]);
    this.save(id, order);
    return answer(true);
  }

  private save(id: number, order: WooOrder): void {
    order.date_modified = formatWooDate(this.now());
    order.date_modified_gmt = order.date_modified;
    this.orders.set(id, order);
  }

  private requireCustomer(customerId: number): void {
    if (!this.customers.has(customerId)) throw new WooError(404, 'checkout_bridge_customer_not_found', 'Customer not found.');
  }

  private requireBridge(): void {
    if (!this.cartBridgeInstalled) throw new WooError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  }
}

/**
 * `shipping_lines` of a REST order update, on the order being written: a line whose method_id or method_title
 * is null is removed, one with an id is updated, one without is added; then shipping_total is their sum.
 */
function writeShippingLines(model: WooCommerceModel, order: WooOrder, posted: unknown[]): void {
  for (const raw of posted) {
    if (raw === null || typeof raw !== 'object') continue;
    const item = raw as Record<string, unknown>;
    const id = typeof item.id === 'number' ? item.id : 0;
    const at = order.shipping_lines.findIndex((line) => line.id === id);
    if (('method_id' in item && item.method_id === null) || ('method_title' in item && item.method_title === null)) {
      if (at < 0) throw new WooError(400, 'woocommerce_rest_invalid_item_id', 'Order item ID provided is not associated with order.');
      order.shipping_lines.splice(at, 1);
      continue;
    }
    if (id !== 0 && at < 0) throw new WooError(400, 'woocommerce_rest_invalid_item_id', 'Order item ID provided is not associated with order.');
    if (id === 0 && !item.method_id) throw new WooError(400, 'woocommerce_rest_invalid_shipping_item', 'Shipping method ID is required.');
    const line: WooShippingLine =
      at >= 0
        ? order.shipping_lines[at]!
        : { id: Math.max(order.id * 100 + 89, ...order.shipping_lines.map((l) => l.id)) + 1, method_title: '', method_id: '', instance_id: '0', total: '0', total_tax: '0', taxes: [], meta_data: [] };
    if (typeof item.method_id === 'string') line.method_id = item.method_id;
    if (typeof item.method_title === 'string') line.method_title = item.method_title;
    if (item.instance_id !== undefined) line.instance_id = String(item.instance_id);
    if (item.total !== undefined) line.total = model.formatAmount(order.currency, String(item.total));
    if (at < 0) order.shipping_lines.push(line);
  }
  const sum = order.shipping_lines.reduce((acc, line) => acc + Math.round(Number(line.total) * 1000), 0);
  order.shipping_total = model.formatAmount(order.currency, (sum / 1000).toFixed(3));
}
