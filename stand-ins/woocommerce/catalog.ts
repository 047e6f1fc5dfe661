/**
 * The stand-in shop's products, and order creation from them (POST /wc/v3/orders), so a storefront's
 * server can turn a cart into a pending order as it does against WooCommerce: it sends product ids
 * and quantities, the shop prices them. Not part of the production bundle.
 */
import { WooError, type WooCommerceModel, type WooOrder } from './model';

export interface CatalogProduct {
  id: number;
  name: string;
  sku: string;
  /** Decimal string in the shop's currency, without tax. */
  price: string;
  virtual?: boolean;
  downloadable?: boolean;
}

/** The demo shop's products (500 and 501 are what the registered demo customer's cart holds). */
export const CATALOG: readonly CatalogProduct[] = [
  { id: 500, name: 'Analytical engine poster', sku: 'DEMO-POSTER', price: '24.50' },
  { id: 501, name: 'Brass gear set', sku: 'DEMO-GEARS', price: '60.00' },
  { id: 502, name: 'Organic cotton T-shirt', sku: 'DEMO-TSHIRT', price: '20.00' },
  { id: 503, name: 'Notes on the Analytical Engine (e-book)', sku: 'DEMO-EBOOK', price: '9.00', virtual: true, downloadable: true },
];

/** GET /wc/v3/products, the fields a storefront lists. */
export function listProducts(): Record<string, unknown>[] {
  return CATALOG.map((p) => ({ id: p.id, name: p.name, sku: p.sku, price: p.price, regular_price: p.price, status: 'publish', virtual: p.virtual ?? false, downloadable: p.downloadable ?? false }));
}

const FIRST_CREATED_ID = 2001;

function cents(decimal: string): number {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
}

const decimal = (value: number) => `${Math.floor(value / 100)}.${String(value % 100).padStart(2, '0')}`;

function invalid(param: string, message: string): WooError {
  return new WooError(400, 'rest_invalid_param', `Invalid parameter(s): ${param}`, { params: { [param]: message } });
}

/**
 * POST /wc/v3/orders: line items priced from the catalog (a price sent by the caller is not taken), the
 * shipping lines as sent, status `pending` unless another is asked; an address sent is written through the
 * model's update, which recalculates taxes as WooCommerce's calculate_totals() does on creation.
 */
export function createOrder(model: WooCommerceModel, body: Record<string, unknown>): WooOrder {
  const items = body.line_items;
  if (!Array.isArray(items) || items.length === 0) throw invalid('line_items', 'line_items must hold at least one item.');
  const lines = items.map((item: unknown) => {
    const { product_id: productId, quantity = 1 } = (item ?? {}) as { product_id?: unknown; quantity?: unknown };
    const product = CATALOG.find((p) => p.id === Number(productId));
    if (!product) throw new WooError(400, 'woocommerce_rest_invalid_product_id', 'Invalid product ID.');
    if (!Number.isInteger(quantity) || (quantity as number) < 1) throw invalid('line_items', 'quantity must be a positive integer.');
    const count = quantity as number;
    return { product_id: product.id, name: product.name, sku: product.sku, quantity: count, total: decimal(cents(product.price) * count), virtual: product.virtual ?? false, downloadable: product.downloadable ?? false };
  });
  const shipping = Array.isArray(body.shipping_lines) ? (body.shipping_lines as { total?: unknown }[]) : [];
  const shippingCents = shipping.reduce((sum, line) => sum + cents(String(line.total ?? '0')), 0);
  const taken = new Set(model.listOrders(1, Number.MAX_SAFE_INTEGER).items.map((order) => order.id));
  let id = FIRST_CREATED_ID;
  while (taken.has(id)) id += 1;
  const customerId = Number(body.customer_id ?? 0);
  model.seed({
    id,
    status: typeof body.status === 'string' ? body.status : 'pending',
    currency: typeof body.currency === 'string' ? body.currency : 'USD',
    customer_id: Number.isInteger(customerId) && customerId > 0 ? customerId : 0,
    lines,
    shipping_total: decimal(shippingCents),
  });
  const addresses = Object.fromEntries(['billing', 'shipping'].filter((key) => body[key] !== undefined).map((key) => [key, body[key]]));
  return Object.keys(addresses).length > 0 ? model.update(id, addresses) : model.get(id);
}
