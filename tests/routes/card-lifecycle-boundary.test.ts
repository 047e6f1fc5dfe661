/**
 * The card boundary for the lifecycle events (docs/decisions.md#d24): how a charge,
 * refund or dispute event is read and how it finds its order.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { toCardEvent } from '@/lib/card/events';
import { deliverEvent } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CARD_LIFECYCLE_EVENTS: 'refunds,disputes' });
  providers.reset();
});

const envelope = (type: string, object: Record<string, unknown>) => ({ id: 'evt_boundary', object: 'event', type, created: 1_800_000_000, data: { object } });

describe('reading lifecycle events', () => {
  it('reads a dispute into the service\'s shape, with the order from an expanded payment intent', () => {
    const event = toCardEvent({
      id: 'evt_1',
      type: 'charge.dispute.created',
      created: 1,
      object: { id: 'dp_1', amount: 4500, currency: 'USD', status: 'needs_response', reason: 'fraudulent', charge: 'ch_1', payment_intent: { id: 'pi_1', metadata: { shop_order_id: '77' } } },
    });
    expect(event).toEqual({
      id: 'evt_1',
      type: 'charge.dispute.created',
      created: 1,
      kind: 'dispute',
      dispute: { disputeId: 'dp_1', chargeId: 'ch_1', amount: 4500, currency: 'usd', status: 'needs_response', reason: 'fraudulent', intentId: 'pi_1', orderId: 77 },
    });
  });

  it('marks a lifecycle event whose object is not what it should be as unreadable, and leaves other types unread', () => {
    expect(toCardEvent({ id: 'e', type: 'charge.refunded', created: 0, object: { object: 'charge' } })).toMatchObject({ kind: 'unreadable' });
    expect(toCardEvent({ id: 'e', type: 'charge.refund.updated', created: 0, object: { id: 're_1', amount: -5, currency: 'usd' } })).toMatchObject({ kind: 'unreadable' });
    expect(toCardEvent({ id: 'e', type: 'customer.created', created: 0, object: {} })).toMatchObject({ kind: 'other' });
  });
});

describe('delivering lifecycle events', () => {
  it('answers 400 for an unreadable event of an enabled type, and 200 with no effect when its word is off', async () => {
    const bad = envelope('charge.refunded', { id: 'ch_1', payment_intent: 42 });
    expect((await deliverEvent(bad)).status).toBe(400);
    useTestEnv({ CARD_LIFECYCLE_EVENTS: 'disputes' });
    expect(await deliverEvent(bad)).toEqual({ status: 200, body: { received: true } });
    expect(providers.calls).toEqual([]);
  });

  it('uses an expanded payment intent\'s order without asking Stripe, and answers an event with no intent as a missing order', async () => {
    providers.woo.seed({ id: 1601, lines: [{ total: '30.00' }] });
    const dispute = { id: 'dp_9', amount: 3000, currency: 'usd', status: 'needs_response', reason: 'fraudulent', charge: 'ch_9' };
    // The order is still pending (its payment not recorded): the dispute is recorded against that payment, with no call to Stripe.
    const expanded = await deliverEvent(envelope('charge.dispute.created', { ...dispute, payment_intent: { id: 'pi_9', metadata: { shop_order_id: '1601' } } }));
    expect(expanded.status).toBe(200);
    expect(providers.callsTo('card')).toEqual([]);
    expect(providers.woo.get(1601).status).toBe('on-hold');

    providers.calls.length = 0;
    expect(await deliverEvent({ ...envelope('charge.dispute.created', { ...dispute, payment_intent: null }), id: 'evt_other' })).toEqual({ status: 200, body: { received: true } });
    expect(providers.calls).toEqual([]);
  });
});
