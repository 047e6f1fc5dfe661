/** A wallet's shipping rate re-priced when the checkout writes another destination (docs/contract.md#express-checkout). */
import { InvalidRequestError } from '@/lib/errors';
import { META } from '@/lib/orders/meta-keys';
import type { OrderChange } from '@/lib/orders/mutation';
import { metaValue } from '@/lib/orders/normalize';
import type { OrderAddress, ShippingDestination, StoreOrder, StoreShippingRate } from '@/lib/store/types';
import type { Store } from '@/lib/store/woocommerce';

interface QuotedAt extends ShippingDestination {
  rate_id: string;
}

/** The meta value shipping-rate writes with the line: the rate and where the store priced it. */
export function quotedAt(rateId: string, destination: ShippingDestination): string {
  const { country, state, postcode, city } = destination;
  return JSON.stringify({ rate_id: rateId, country, state, postcode, city } satisfies QuotedAt);
}

export function shippingLineOf(rate: StoreShippingRate): NonNullable<OrderChange['shippingLine']> {
  return { methodId: rate.method_id, instanceId: rate.instance_id, title: rate.label, total: rate.total };
}

function readQuotedAt(order: StoreOrder): QuotedAt | undefined {
  const raw = metaValue(order, META.expressShippingDestination);
  if (raw === undefined) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<QuotedAt>;
    return typeof value.rate_id === 'string' && typeof value.country === 'string'
      ? { rate_id: value.rate_id, country: value.country, state: value.state ?? '', postcode: value.postcode ?? '', city: value.city ?? '' }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Compared as WooCommerce matches zones: codes upper-cased, postcodes without spaces or dashes. */
function sameDestination(a: ShippingDestination, b: ShippingDestination): boolean {
  const key = (d: ShippingDestination) =>
    [d.country.trim().toUpperCase(), d.state.trim().toUpperCase(), d.postcode.replace(/[\s-]/g, '').toUpperCase(), d.city.trim().toLowerCase()].join('\n');
  return key(a) === key(b);
}

/**
 * The shipping line and meta to write with a new shipping address when the line was chosen through
 * express checkout: WooCommerce re-taxes on an address write but never re-rates an existing line.
 */
export async function rerateExpressShipping(
  store: Store,
  order: StoreOrder,
  shipping: OrderAddress | undefined,
): Promise<{ line: Pick<OrderChange, 'shippingLine'>; meta: Record<string, string> }> {
  const quoted = shipping === undefined ? undefined : readQuotedAt(order);
  if (shipping === undefined || quoted === undefined || !(order.shipping_lines ?? []).some((line) => line.method_id)) return { line: {}, meta: {} };
  const destination = { country: shipping.country ?? '', state: shipping.state ?? '', postcode: shipping.postcode ?? '', city: shipping.city ?? '' };
  if (sameDestination(quoted, destination)) return { line: {}, meta: {} };

  const quote = await store.getShippingRates(order.id, destination);
  const rate = quote.rates.find((offered) => offered.id === quoted.rate_id);
  if (!rate) {
    throw new InvalidRequestError([
      { code: 'custom', path: ['shipping_address'], message: 'the chosen shipping rate is not available at this address: choose a shipping rate again' },
    ]);
  }
  return {
    line: { shippingLine: shippingLineOf(rate) },
    meta: { [META.expressShippingDestination]: quotedAt(rate.id, quote.destination) },
  };
}
