/**
 * The shop, as this storefront's server reaches it: WooCommerce's REST API with the shop's key
 * (over https the key is sent as Basic auth, over http the client signs with OAuth 1.0a).
 */
import 'server-only';
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';

export interface Product {
  id: number;
  name: string;
  /** Decimal string in the shop's currency, as WooCommerce answers it. */
  price: string;
}

export interface CartLine {
  productId: number;
  quantity: number;
}

export interface ShopOrder {
  id: number;
  status: string;
  /** The WooCommerce customer (0: a guest); only a registered customer's card can be saved. */
  customer_id: number;
  currency: string;
  /** Decimal string, as WooCommerce answers it. */
  total: string;
  shipping_total: string;
  total_tax: string;
  line_items: { name: string; quantity: number; total: string }[];
  shipping_lines: { method_id: string; method_title: string; instance_id?: string; total: string; total_tax: string }[];
  meta_data: { key: string; value: unknown }[];
}

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: see .env.example`);
  return value;
}

/**
 * The signed-in shop customer, or 0 for a guest. This example has no accounts: SHOP_CUSTOMER_ID stands in
 * for your own login session, which must be what names the customer (never a value the browser sends).
 */
export function signedInCustomerId(): number {
  const id = Number(process.env.SHOP_CUSTOMER_ID || 0);
  return Number.isSafeInteger(id) && id > 0 ? id : 0;
}

function api(): WooCommerceRestApi {
  return new WooCommerceRestApi({
    url: setting('WOOCOMMERCE_URL'),
    consumerKey: setting('WOOCOMMERCE_CONSUMER_KEY'),
    consumerSecret: setting('WOOCOMMERCE_CONSUMER_SECRET'),
    version: 'wc/v3',
  });
}

export async function listProducts(): Promise<Product[]> {
  const { data } = await api().get('products', { per_page: 20, status: 'publish' });
  return (data as Product[]).map(({ id, name, price }) => ({ id, name, price }));
}

/**
 * The cart as a pending order: product ids and quantities only, so WooCommerce prices every line
 * itself; the customer's addresses come later, with the payment (POST /api/payment-intent writes them).
 */
export async function createPendingOrder(cart: CartLine[]): Promise<ShopOrder> {
  const { data } = await api().post('orders', {
    status: 'pending',
    currency: process.env.SHOP_CURRENCY || 'USD',
    set_paid: false,
    customer_id: signedInCustomerId(),
    line_items: cart.map((line) => ({ product_id: line.productId, quantity: line.quantity })),
    // One flat rate until the customer's address is known; express checkout replaces it with the shop's rate there.
    shipping_lines: [{ method_id: 'flat_rate', method_title: 'Flat rate', total: process.env.SHOP_FLAT_SHIPPING || '5.00' }],
  });
  return data as ShopOrder;
}

export async function getOrder(orderId: number): Promise<ShopOrder> {
  const { data } = await api().get(`orders/${orderId}`);
  return data as ShopOrder;
}

/** A decimal amount as WooCommerce answers it, in the currency's minor unit (for display: the service computes what is charged). */
export function minorUnits(amount: string, currency: string): number {
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return Math.round(Number(amount) * 10 ** digits);
}
