/**
 * CARD_LIFECYCLE_EVENTS=disputes (docs/decisions.md#d24): a chargeback puts its order on
 * hold with a private note, and its outcome restores or fails the order.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { deliverEvent, paidOrder as paidOrderAt } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ CARD_LIFECYCLE_EVENTS: 'disputes' });
  providers.reset();
});

const paidOrder = (orderId: number, recorded = true) => paidOrderAt(providers, orderId, recorded);

const notesOf = (orderId: number) => providers.woo.notes.get(orderId) ?? [];
const meta = (orderId: number, key: string) => providers.woo.get(orderId).meta_data.find((m) => m.key === key)?.value;
const facts = (orderId: number) => JSON.parse(String(meta(orderId, '_cardprovider_payment'))) as Record<string, unknown>;

describe('charge.dispute.created', () => {
  it('puts the order on hold, remembers its status and the dispute, and leaves a private note', async () => {
    const intent = await paidOrder(1501);
    const { dispute, event } = providers.stripe.dispute(intent.id);

    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });

    const order = providers.woo.get(1501);
    expect(order.status).toBe('on-hold');
    expect(meta(1501, '_dispute_id')).toBe(dispute.id);
    expect(facts(1501)).toMatchObject({ resume: 'processing', disputes: { [dispute.id]: { status: 'needs_response' } } });
    expect(notesOf(1501)).toEqual([expect.objectContaining({ customer_note: false, note: expect.stringContaining(dispute.id) })]);
    // The customer's note is not touched: the customer is not told of the dispute.
    expect(order.customer_note).toBe('');
  });

  it('applies a dispute once however often and concurrently it is delivered', async () => {
    const intent = await paidOrder(1502);
    const { event } = providers.stripe.dispute(intent.id);
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliverEvent(event)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // The same dispute under another event id (reconciliation, a resend): still once.
    expect((await deliverEvent({ ...event, id: `${event.id}_again` })).status).toBe(200);
    expect(notesOf(1502)).toHaveLength(1);
    expect(providers.orderUpdates(1502)).toHaveLength(2); // the payment, then the hold
  });
});

describe('charge.dispute.closed', () => {
  it('restores the remembered status when won, with a note', async () => {
    const intent = await paidOrder(1511);
    const { dispute, event } = providers.stripe.dispute(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);

    expect((await deliverEvent(providers.stripe.closeDispute(dispute.id, 'won'))).status).toBe(200);

    expect(providers.woo.get(1511).status).toBe('processing');
    expect(meta(1511, '_dispute_status')).toBe('won');
    expect(notesOf(1511).map((n) => n.note).join('\n')).toMatch(/closed \(won\)/);
  });

  it('sets failed when lost, with a note', async () => {
    const intent = await paidOrder(1512);
    const { dispute, event } = providers.stripe.dispute(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);

    expect((await deliverEvent(providers.stripe.closeDispute(dispute.id, 'lost'))).status).toBe(200);

    expect(providers.woo.get(1512).status).toBe('failed');
    expect(notesOf(1512).map((n) => n.note).join('\n')).toMatch(/was lost/);
  });

  it('a close that arrives before its dispute ends where both in order would: the late opening holds nothing', async () => {
    const intent = await paidOrder(1513);
    const { dispute, event: created } = providers.stripe.dispute(intent.id);
    const closed = providers.stripe.closeDispute(dispute.id, 'won');

    expect((await deliverEvent(closed)).status).toBe(200);
    expect((await deliverEvent(created)).status).toBe(200);
    expect(providers.woo.get(1513).status).toBe('processing');
    expect(meta(1513, '_dispute_status')).toBe('won');
  });

  it('records a dispute of a payment the order does not show yet, and holds the order once paid', async () => {
    const intent = await paidOrder(1514, false);
    const { dispute, event } = providers.stripe.dispute(intent.id);
    expect((await deliverEvent(event)).status).toBe(200);
    expect(providers.woo.get(1514).status).toBe('on-hold');

    const succeeded = providers.stripe.events.events.find((e) => e.type === 'payment_intent.succeeded')!;
    expect((await deliverEvent(succeeded)).status).toBe(200);
    expect(providers.woo.get(1514)).toMatchObject({ status: 'on-hold', transaction_id: expect.stringMatching(/^ch_/) });
    expect((await deliverEvent(providers.stripe.closeDispute(dispute.id, 'won'))).status).toBe(200);
    expect(providers.woo.get(1514).status).toBe('processing');
  });
});

describe('dispute funds', () => {
  it('adds a note only when funds are withdrawn or reinstated', async () => {
    const intent = await paidOrder(1521);
    const { dispute } = providers.stripe.dispute(intent.id);
    const updatesBefore = providers.orderUpdates(1521).length;

    expect((await deliverEvent(providers.stripe.disputeFunds(dispute.id, 'withdrawn'))).status).toBe(200);
    expect((await deliverEvent(providers.stripe.disputeFunds(dispute.id, 'reinstated'))).status).toBe(200);

    expect(notesOf(1521).map((n) => n.note)).toEqual([expect.stringMatching(/withdrew 30\.00 USD/), expect.stringMatching(/reinstated 30\.00 USD/)]);
    expect(providers.orderUpdates(1521)).toHaveLength(updatesBefore);
  });
});

describe('with CARD_LIFECYCLE_EVENTS empty', () => {
  it('acknowledges dispute events and changes nothing', async () => {
    const intent = await paidOrder(1531);
    useTestEnv();
    providers.calls.length = 0;
    const { dispute, event } = providers.stripe.dispute(intent.id);
    expect(await deliverEvent(event)).toEqual({ status: 200, body: { received: true } });
    expect(await deliverEvent(providers.stripe.closeDispute(dispute.id, 'lost'))).toEqual({ status: 200, body: { received: true } });
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(1531).status).toBe('processing');
  });
});
