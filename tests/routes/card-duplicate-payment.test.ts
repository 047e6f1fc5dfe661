/**
 * A second successful payment for an order already paid through another
 * intent (docs/decisions.md#d12): answered as the spec says (200, no order write) and
 * logged at error level as `card.duplicate_payment`; a redelivery of the
 * payment that paid the order raises nothing.
 */
import Stripe from 'stripe';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/cardprovider/webhook/route';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

let eventCounter = 0;

function succeeded(orderId: number, intentId: string, chargeId: string) {
  eventCounter += 1;
  return {
    id: `evt_dup_${eventCounter}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    data: {
      object: {
        id: intentId,
        object: 'payment_intent',
        amount: 1000,
        currency: 'usd',
        status: 'succeeded',
        metadata: { shop_order_id: String(orderId) },
        latest_charge: chargeId,
      },
    },
  };
}

async function deliver(event: unknown) {
  const payload = JSON.stringify(event);
  const response = await POST(
    new Request('http://localhost:3000/api/cardprovider/webhook', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': freshIp(),
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: TEST_WEBHOOK_SECRET }),
      },
      body: payload,
    }),
  );
  return { status: response.status, body: await response.json() };
}

const duplicateLines = () => loggedLines().filter((line) => line.event === 'card.duplicate_payment');

describe('card webhook: a second payment is never silent', () => {
  it('a success through another intent for a paid order: 200, no write, and an error naming both intents and the order', async () => {
    providers.woo.seed({ id: 701, lines: [{ total: '10.00' }] });
    expect((await deliver(succeeded(701, 'pi_first', 'ch_first'))).status).toBe(200);
    const paid = providers.woo.get(701);
    expect(paid.status).toBe('processing');

    const { status, body } = await deliver(succeeded(701, 'pi_second', 'ch_second'));

    expect(status).toBe(200);
    expect(body).toEqual({ received: true });
    expect(providers.orderUpdates(701)).toHaveLength(1);
    expect(providers.woo.get(701)).toEqual(paid);
    expect(duplicateLines()).toEqual([
      expect.objectContaining({
        level: 'error',
        orderId: 701,
        paidIntentId: 'pi_first',
        duplicateIntentId: 'pi_second',
        duplicateChargeId: 'ch_second',
        amount: 1000,
        currency: 'usd',
      }),
    ]);
  });

  it('the same intent delivered again, even under another event id or charge, raises nothing', async () => {
    providers.woo.seed({ id: 702, lines: [{ total: '10.00' }] });
    await deliver(succeeded(702, 'pi_only', 'ch_only'));
    await deliver(succeeded(702, 'pi_only', 'ch_only'));
    await deliver(succeeded(702, 'pi_only', 'ch_retry'));

    expect(providers.orderUpdates(702)).toHaveLength(1);
    expect(duplicateLines()).toEqual([]);
  });

  it('a card payment for an order paid another way (manual, by hand) is a duplicate too', async () => {
    providers.woo.seed({ id: 703, status: 'processing', lines: [{ total: '10.00' }], meta_data: [{ key: '_payment_method', value: 'manual' }] });

    const { status } = await deliver(succeeded(703, 'pi_card', 'ch_card'));

    expect(status).toBe(200);
    expect(providers.orderUpdates(703)).toHaveLength(0);
    expect(duplicateLines()).toEqual([
      expect.objectContaining({ level: 'error', orderId: 703, duplicateIntentId: 'pi_card' }),
    ]);
    expect(duplicateLines()[0]?.paidIntentId).toBeUndefined();
  });

  it('a charge the store already records as the order transaction raises nothing', async () => {
    providers.woo.seed({ id: 704, status: 'processing', lines: [{ total: '10.00' }] });
    // Recorded by another integration (the official gateway plugin writes the charge id there).
    providers.woo.orders.get(704)!.transaction_id = 'ch_gateway';

    await deliver(succeeded(704, 'pi_gateway', 'ch_gateway'));

    expect(duplicateLines()).toEqual([]);
  });
});
