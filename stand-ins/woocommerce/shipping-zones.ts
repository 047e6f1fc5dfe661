/**
 * The stand-in's shipping: zones, their methods (flat rate with shipping-class costs, free shipping over a
 * threshold), the companion plugin's GET orders/<id>/shipping-rates, and REST writes of `shipping_lines`.
 * Modelled on WooCommerce 10 (WC_Shipping_Zones::get_zone_matching_package, WC_Shipping_Flat_Rate,
 * WC_Shipping_Free_Shipping::is_available, WC_REST_Orders_V2_Controller::set_item / item_is_null) and checked
 * against a real 10.0.2 store with the plugin's route. Left out: continents, postcode ranges, coupons that
 * grant free shipping, local pickup, flat-rate cost formulas ([qty], [fee]).
 */
import { WooError, type WooAddress, type WooCommerceModel, type WooOrder } from './model';

export interface ZoneLocation {
  /** `CA`, `CA:ON`, or a postcode (`M5V*` wildcard, `M5V 2T6` exact). */
  code: string;
  type: 'country' | 'state' | 'postcode';
}

export type ShippingMethod =
  | {
      type: 'flat_rate';
      instanceId: number;
      title?: string;
      /** Decimal; `taxable` by default, as WooCommerce's flat rate. */
      cost: string;
      /** Extra cost per shipping class present in the order (WooCommerce's "per class" calculation). */
      classCosts?: Record<string, string>;
      noClassCost?: string;
      taxStatus?: 'taxable' | 'none';
    }
  | {
      type: 'free_shipping';
      instanceId: number;
      title?: string;
      /** Decimal: available when the items' total (after discounts, before tax) reaches it. */
      minAmount?: string;
    };

export interface ShippingZone {
  name: string;
  locations: ZoneLocation[];
  methods: ShippingMethod[];
}

export interface ShippingSettings {
  /** In the shop's zone order; the first that matches serves the destination. */
  zones: ShippingZone[];
  /** "Locations not covered by your other zones". */
  restOfWorld: ShippingMethod[];
  /** A product's shipping class slug, by product id. */
  productClasses?: Record<number, string>;
  /** woocommerce_shipping_hide_rates_when_free. */
  hideRatesWhenFree?: boolean;
}

const settingsOf = new WeakMap<WooCommerceModel, ShippingSettings>();

/** What a shop owner sets under WooCommerce → Settings → Shipping. A model without it has no zone: every destination is served by nothing. */
export function configureShipping(model: WooCommerceModel, settings: ShippingSettings): void {
  settingsOf.set(model, settings);
}

const compact = (postcode: string) => postcode.replace(/\s+/g, '').toUpperCase();

/** wc_postcode_location_matcher, without ranges: exact, or a `*` wildcard at the end. */
function postcodeMatches(pattern: string, postcode: string): boolean {
  const wanted = compact(pattern);
  const given = compact(postcode);
  return wanted.endsWith('*') ? given.startsWith(wanted.slice(0, -1)) : given === wanted;
}

function zoneMatches(zone: ShippingZone, destination: WooAddress): boolean {
  const country = (destination.country ?? '').toUpperCase();
  const state = (destination.state ?? '').toUpperCase();
  const regions = zone.locations.filter((l) => l.type !== 'postcode');
  const postcodes = zone.locations.filter((l) => l.type === 'postcode');
  const inRegion = regions.some((l) => (l.type === 'country' ? l.code.toUpperCase() === country : l.code.toUpperCase() === `${country}:${state}`));
  return inRegion && (postcodes.length === 0 || postcodes.some((l) => postcodeMatches(l.code, destination.postcode ?? '')));
}

function methodsFor(settings: ShippingSettings, destination: WooAddress): ShippingMethod[] {
  return settings.zones.find((zone) => zoneMatches(zone, destination))?.methods ?? settings.restOfWorld;
}

interface Rate {
  id: string;
  method_id: string;
  instance_id: number;
  label: string;
  total: string;
  taxable: boolean;
}

function ratesFor(model: WooCommerceModel, settings: ShippingSettings, order: WooOrder, destination: WooAddress): Rate[] {
  const amount = (value: string) => model.formatAmount(order.currency, value);
  const units = (value: string) => Math.round(Number(amount(value)) * 1000);
  const itemsTotal = order.line_items.reduce((sum, line) => sum + units(line.total), 0);
  const classes = new Set(order.line_items.map((line) => settings.productClasses?.[line.product_id] ?? ''));
  const rates: Rate[] = [];
  for (const method of methodsFor(settings, destination)) {
    const id = `${method.type}:${method.instanceId}`;
    if (method.type === 'free_shipping') {
      if (method.minAmount !== undefined && itemsTotal < units(method.minAmount)) continue;
      rates.push({ id, method_id: method.type, instance_id: method.instanceId, label: method.title ?? 'Free shipping', total: amount('0'), taxable: false });
      continue;
    }
    let cost = units(method.cost);
    for (const shippingClass of classes) {
      const extra = shippingClass === '' ? method.noClassCost : method.classCosts?.[shippingClass];
      if (extra !== undefined) cost += units(extra);
    }
    rates.push({
      id,
      method_id: method.type,
      instance_id: method.instanceId,
      label: method.title ?? 'Flat rate',
      total: amount((cost / 1000).toFixed(3)),
      taxable: method.taxStatus !== 'none',
    });
  }
  if (settings.hideRatesWhenFree && rates.some((rate) => rate.method_id === 'free_shipping')) {
    return rates.filter((rate) => rate.method_id === 'free_shipping');
  }
  return rates;
}

/** checkout_cart_bridge_state_code: a state given by name in the shop's list becomes its code. */
const STATE_NAMES: Record<string, Record<string, string>> = {
  CA: { ONTARIO: 'ON', QUEBEC: 'QC', 'BRITISH COLUMBIA': 'BC', ALBERTA: 'AB' },
  US: { 'NEW YORK': 'NY', CALIFORNIA: 'CA', TEXAS: 'TX' },
};

/** The companion plugin's GET orders/<id>/shipping-rates: computed on copies, the order is never changed. */
export function shippingRatesRoute(model: WooCommerceModel, orderId: number, query: URLSearchParams): unknown {
  if (!model.cartBridgeInstalled) throw new WooError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  const country = query.get('country');
  if (country === null) throw new WooError(400, 'rest_missing_callback_param', 'Missing parameter(s): country', { params: ['country'] });
  if (!/^[A-Za-z]{2}$/.test(country)) {
    throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): country', { params: { country: 'country does not match pattern ^[A-Za-z]{2}$.' } });
  }
  const order = model.orders.get(orderId);
  if (!order) throw new WooError(404, 'checkout_bridge_order_not_found', 'Order not found.');
  const code = country.toUpperCase();
  const state = (query.get('state') ?? '').trim();
  const destination = {
    country: code,
    state: STATE_NAMES[code]?.[state.toUpperCase()] ?? (state.length <= 3 ? state.toUpperCase() : state),
    postcode: (query.get('postcode') ?? '').trim().toUpperCase(),
    city: (query.get('city') ?? '').trim(),
  };
  const settings = settingsOf.get(model) ?? { zones: [], restOfWorld: [] };
  const rates = ratesFor(model, settings, order, destination).map(({ taxable, ...rate }) => {
    const taxes = model.taxesAt(orderId, destination, taxable ? rate.total : '0');
    return { ...rate, total_tax: taxes.shippingTax };
  });
  return { rates, cart_tax: model.taxesAt(orderId, destination, '0').cartTax, destination };
}
