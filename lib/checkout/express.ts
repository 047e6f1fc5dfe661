/** Express checkout: the store's shipping rates for a wallet's address, the chosen one written (docs/contract.md#express-checkout). */
import { quotedAt, shippingLineOf } from '@/lib/checkout/express-rerate';
import { reuseRefusal, updateUnpaidIntent } from '@/lib/checkout/payment-intent';
import { loadPayableOrder, orderIdFromToken } from '@/lib/checkout/load-payable-order';
import type {
  ExpressShippingRate,
  SheetLineItem,
  ShippingRateRequest,
  ShippingRateResponse,
  ShippingRatesRequest,
  ShippingRatesResponse,
  WalletAddress,
} from '@/lib/checkout/express-schemas';
import { InvalidRequestError } from '@/lib/errors';
import type { RequestContext } from '@/lib/log';
import { chargeableAmount, toMinorUnits } from '@/lib/money';
import { META } from '@/lib/orders/meta-keys';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { normalizeOrder, type NormalizedOrder } from '@/lib/orders/normalize';
import type { Services } from '@/lib/services';
import type { ShippingDestination, StoreShippingQuote, StoreShippingRate } from '@/lib/store/types';

function destinationOf(address: WalletAddress): ShippingDestination {
  return { country: address.country, state: address.state ?? '', postcode: address.postal_code ?? '', city: address.city ?? '' };
}

function sheetLines(items: number, shipping: number, tax: number): SheetLineItem[] {
  const lines = [{ name: 'Subtotal', amount: items }, { name: 'Shipping', amount: shipping }];
  return tax === 0 ? lines : [...lines, { name: 'Tax', amount: tax }];
}

export function rateOnSheet(order: NormalizedOrder, quote: StoreShippingQuote, rate: StoreShippingRate): ExpressShippingRate {
  const minor = (amount: string) => toMinorUnits(amount, order.currency);
  const items = order.subtotal_cents + order.fees_cents;
  const shipping = minor(rate.total);
  const tax = minor(quote.cart_tax) + minor(rate.total_tax);
  return {
    id: rate.id,
    label: rate.label,
    amount: shipping + minor(rate.total_tax),
    total: chargeableAmount(items + shipping + tax, order.currency),
    line_items: sheetLines(items, shipping, tax),
  };
}

export async function quoteShippingRates(input: ShippingRatesRequest, services: Services, context: RequestContext): Promise<ShippingRatesResponse> {
  const orderId = await orderIdFromToken(input.token, services, context);
  const { normalized } = await loadPayableOrder(orderId, services);
  const quote = await services.store().getShippingRates(orderId, destinationOf(input.address));
  context.outcome = quote.rates.length > 0 ? 'rates_quoted' : 'no_rates';
  return {
    success: true,
    currency: normalized.currency.toLowerCase(),
    shipping_rates: quote.rates.map((rate) => rateOnSheet(normalized, quote, rate)),
  };
}

export async function chooseShippingRate(input: ShippingRateRequest, services: Services, context: RequestContext): Promise<ShippingRateResponse> {
  const orderId = await orderIdFromToken(input.token, services, context);
  const card = await services.card();
  const store = services.store();

  return services.orderLocks.withOrderLock(orderId, async () => {
    const { order } = await loadPayableOrder(orderId, services);
    // The rate and its price come from the store at this address, never from the request.
    const quote = await store.getShippingRates(orderId, destinationOf(input.address));
    const rate = quote.rates.find((offered) => offered.id === input.shipping_rate_id);
    if (!rate) throw new InvalidRequestError([{ code: 'custom', path: ['shipping_rate_id'], message: 'is not offered at this address' }]);

    // The street of an earlier address does not belong to this one; the wallet's full address comes with the payment.
    const { destination } = quote;
    const update = buildOrderUpdate(order, {
      shipping: { ...destination, address_1: '', address_2: '' },
      shippingLine: shippingLineOf(rate),
      meta: { [META.checkoutAddressUpdated]: new Date().toISOString(), [META.expressShippingDestination]: quotedAt(rate.id, destination) },
      metaMode: 'replace',
    });
    const updated = normalizeOrder(await store.updateOrder(orderId, update));
    // The intent follows the new total while its card is still to come.
    const intent = updated.payment_intent_id ? await card.retrievePaymentIntent(updated.payment_intent_id) : undefined;
    if (intent !== undefined && reuseRefusal(intent, orderId, updated.currency) === undefined && intent.amount !== updated.charge_cents) {
      await updateUnpaidIntent(card, intent, { amount: updated.charge_cents }, orderId);
    }

    context.outcome = 'rate_chosen';
    const { id, label, amount } = rateOnSheet(updated, quote, rate);
    return {
      success: true,
      currency: updated.currency.toLowerCase(),
      total: updated.charge_cents,
      shipping_rate: { id, label, amount },
      line_items: sheetLines(updated.subtotal_cents + updated.fees_cents, updated.shipping_cost_cents, updated.tax_cents),
    };
  });
}
