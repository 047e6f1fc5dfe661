/**
 * Whatever a wallet and another tab do to an order (addresses reported, rates chosen, the card form's
 * addresses, two changes at once), the intent's amount is the order's total after every step, and a wallet's
 * shipping line is the store's price of that rate at the card form's address (or the address is refused); a change
 * that lands after the wallet confirmed is caught by the card webhook, which puts the order on hold.
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingRate } from '@/app/api/express-checkout/shipping-rate/route';
import { POST as shippingRates } from '@/app/api/express-checkout/shipping-rates/route';
import { normalizeOrder } from '@/lib/orders/normalize';
import { AMOUNT_MISMATCH_NOTE } from '@/lib/orders/notes';
import { storeOrderSchema } from '@/lib/store/types';
import { shippingRatesRoute } from '@/stand-ins/woocommerce/shipping-zones';
import { deliverEvent } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { expressShop } from '../support/express-shop';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
});

const ADDRESSES = [
  { country: 'CA', state: 'ON', postal_code: 'M5V 2T6', city: 'Toronto' },
  { country: 'US', state: 'NY', postal_code: '10001', city: 'New York' },
  { country: 'AU', state: 'NSW', postal_code: '2000', city: 'Sydney' },
  { country: 'GB', state: '', postal_code: 'N1 7AA', city: 'London' },
];

type Step =
  | { kind: 'quote'; address: number }
  | { kind: 'choose'; address: number; pick: number }
  | { kind: 'card-form'; address: number }
  | { kind: 'two-tabs'; first: { address: number; pick: number }; second: { address: number; pick: number } };

const address = fc.nat({ max: ADDRESSES.length - 1 });
const choice = fc.record({ address, pick: fc.nat({ max: 3 }) });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('quote' as const), address }),
  fc.record({ kind: fc.constant('choose' as const), address, pick: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant('card-form' as const), address }),
  fc.record({ kind: fc.constant('two-tabs' as const), first: choice, second: choice }),
);

async function post(handler: (request: Request) => Promise<Response>, path: string, body: Record<string, unknown>) {
  const response = await handler(postJson(path, body));
  return { status: response.status, body: await response.json() };
}

/** A wallet's shipping line is priced as the store prices its rate at the order's final address. */
function expectLineAtStoreRate(orderId: number, at: { country: string; state: string; postcode: string; city: string }): void {
  const order = providers.woo.get(orderId);
  const quoted = order.meta_data.find((entry) => entry.key === '_express_shipping_destination');
  if (quoted === undefined) return;
  const { rate_id: rateId } = JSON.parse(String(quoted.value)) as { rate_id: string };
  const query = new URLSearchParams({ country: at.country, state: at.state, postcode: at.postcode, city: at.city });
  const { rates } = shippingRatesRoute(providers.woo, orderId, query) as { rates: { id: string; total: string }[] };
  expect(order.shipping_lines[0]?.total).toBe(rates.find((rate) => rate.id === rateId)?.total);
}

async function run(orderId: number, lines: string[], steps: Step[], lateChange: { address: number; pick: number } | null): Promise<void> {
  expressShop(providers);
  providers.woo.seed({ id: orderId, currency: 'CAD', lines: lines.map((total) => ({ total })) });
  const token = await tokenFor(orderId);
  const orderCents = () => normalizeOrder(storeOrderSchema.parse(providers.woo.get(orderId))).charge_cents;
  const intent = () => [...providers.stripe.intents.values()].find((i) => i.metadata.shop_order_id === String(orderId))!;

  /** The wallet picks one of the rates the service offered at the address; none offered, nothing to choose. */
  const choose = async ({ address: at, pick }: { address: number; pick: number }) => {
    const offered = await post(shippingRates, '/api/express-checkout/shipping-rates', { token, address: ADDRESSES[at] });
    expect(offered.status).toBe(200);
    const rates = offered.body.shipping_rates as { id: string; total: number }[];
    if (rates.length === 0) return;
    const rate = rates[pick % rates.length]!;
    return post(shippingRate, '/api/express-checkout/shipping-rate', { token, shipping_rate_id: rate.id, address: ADDRESSES[at] });
  };

  expect((await post(paymentIntent, '/api/payment-intent', { token })).status).toBe(200);
  for (const current of steps) {
    if (current.kind === 'quote') {
      const before = providers.woo.get(orderId).total;
      await post(shippingRates, '/api/express-checkout/shipping-rates', { token, address: ADDRESSES[current.address] });
      expect(providers.woo.get(orderId).total).toBe(before);
    } else if (current.kind === 'choose') {
      const chosen = await choose(current);
      if (chosen) expect(chosen.body.total).toBe(orderCents());
    } else if (current.kind === 'card-form') {
      const full = { ...ADDRESSES[current.address]!, postcode: ADDRESSES[current.address]!.postal_code, address_1: '1 Main St', first_name: 'Ada' };
      const before = providers.woo.get(orderId);
      const paid = await post(paymentIntent, '/api/payment-intent', { token, shipping_address: full });
      if (paid.status === 400) {
        // The wallet's rate is not offered at the card form's address: refused, nothing written.
        expect(paid.body.details[0].message).toContain('choose a shipping rate again');
        expect(providers.woo.get(orderId)).toEqual(before);
      } else {
        expect(paid.status).toBe(200);
        expectLineAtStoreRate(orderId, full);
      }
    } else {
      // Another tab's change arrives while the first is writing the order: the first is held at its write,
      // the second started, then the first released; the order lock puts one after the other.
      const offered = await post(shippingRates, '/api/express-checkout/shipping-rates', { token, address: ADDRESSES[current.first.address] });
      const writes = offered.body.shipping_rates.length > 0;
      const hold = writes ? providers.holdStore('PUT', new RegExp(`/orders/${orderId}$`)) : undefined;
      const first = choose(current.first);
      await hold?.reached;
      const second = choose(current.second);
      hold?.release();
      await Promise.all([first, second]);
    }
    expect(intent().status).toBe('requires_payment_method');
    expect(intent().amount).toBe(orderCents());
  }

  // The wallet confirms; a change from another tab may land before Stripe's event does.
  const paid = providers.stripe.succeed(intent().id);
  const totalWhenPaid = orderCents();
  if (lateChange) await choose(lateChange);
  expect((await deliverEvent(providers.stripe.events.events.at(-1)!)).status).toBe(200);
  const order = providers.woo.get(orderId);
  if (orderCents() !== totalWhenPaid) {
    expect(order).toMatchObject({ status: 'on-hold', customer_note: AMOUNT_MISMATCH_NOTE });
  } else {
    expect(paid.amount).toBe(orderCents());
    expect(order.status).toBe('processing');
  }
}

describe('express checkout: the amount always equals the order', () => {
  it('keeps the intent’s amount at the order’s total after every address and rate change, and holds a payment the order outgrew', async () => {
    let orderId = 9000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('20.00', '35.50', '60.00', '7.25'), { minLength: 1, maxLength: 3 }),
        fc.array(step, { maxLength: 8 }),
        fc.option(choice, { nil: null }),
        async (lines, steps, lateChange) => {
          orderId += 1;
          await run(orderId, lines, steps, lateChange);
        },
      ),
      { numRuns: Number(process.env.EXPRESS_RUNS ?? 25), seed: 2026_11_26 },
    );
  }, 90_000);
});
