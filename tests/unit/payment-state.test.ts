/**
 * The payment model (lib/orders/payment-state.ts) on its own: facts, holds as a set, the status they give,
 * and the same end whatever order the facts arrive in.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyFact,
  emptyPaymentState,
  holdsOf,
  nextStatus,
  observeShop,
  parsePaymentState,
  rebuildPaymentState,
  type PaymentFact,
  type PaymentState,
} from '@/lib/orders/payment-state';

const settings = { authorizedStatus: false };

/** Applies facts as the handlers do (shop's hand observed, fact applied, status derived), from a status. */
function run(facts: PaymentFact[], status = 'pending', options = settings): { status: string; state: PaymentState; outcomes: string[] } {
  let state = emptyPaymentState();
  const outcomes: string[] = [];
  for (const fact of facts) {
    const before = observeShop(state, status);
    const applied = applyFact(before, fact);
    outcomes.push(applied.outcome);
    if (applied.outcome !== 'applied') continue;
    const next = nextStatus(status, before, applied.state, options);
    state = next.state;
    status = next.status ?? status;
  }
  return { status, state, outcomes };
}

const PI = 'pi_1';
const authorized: PaymentFact = { kind: 'authorized', at: 100, intentId: PI, chargeId: 'ch_1' };
const succeeded: PaymentFact = { kind: 'succeeded', at: 200, intentId: PI, chargeId: 'ch_1', amountMatches: true };
const reviewOpened: PaymentFact = { kind: 'review_opened', reviewId: 'prv_1', intentId: PI };
const reviewApproved: PaymentFact = { kind: 'review_closed', reviewId: 'prv_1', intentId: PI, closedReason: 'approved' };
const disputeOpened: PaymentFact = { kind: 'dispute_opened', disputeId: 'dp_1', intentId: PI, chargeId: 'ch_1', status: 'needs_response' };
const disputeWon: PaymentFact = { kind: 'dispute_closed', disputeId: 'dp_1', intentId: PI, chargeId: 'ch_1', status: 'won' };
const failure = (at: number, chargeId = `ch_f${at}`): PaymentFact => ({ kind: 'failed', at, intentId: PI, chargeId });

describe('holds are a set', () => {
  it('a dispute opened while a review holds the order outlives the review, and the order comes back paid', () => {
    const { status, state } = run([succeeded, reviewOpened, disputeOpened, reviewApproved, disputeWon]);
    expect(status).toBe('processing');
    expect(holdsOf(state).size).toBe(0);
  });

  it('a later hold never overwrites where the first one found the order', () => {
    expect(run([succeeded, reviewOpened, disputeOpened, reviewApproved, disputeWon], 'shipped').status).toBe('shipped');
  });

  it('ending one hold leaves the order on hold while another is active', () => {
    expect(run([succeeded, reviewOpened, disputeOpened, reviewApproved]).status).toBe('on-hold');
    expect(run([succeeded, disputeOpened, reviewOpened, disputeWon]).status).toBe('on-hold');
  });

  it('an order shipped before a dispute goes back to shipped when it is won', () => {
    expect(run([succeeded, disputeOpened, disputeWon], 'shipped').status).toBe('shipped');
    // Paid by other means (no card payment recorded): back where it was, not to pending.
    expect(run([disputeOpened, disputeWon], 'processing').status).toBe('processing');
  });

  it('an authorization alone shows as the plugin status under on_shipment, on-hold with any other hold', () => {
    const onShipment = { authorizedStatus: true };
    expect(run([authorized], 'pending', onShipment).status).toBe('authorized');
    expect(run([reviewOpened, authorized], 'pending', onShipment).status).toBe('on-hold');
    expect(run([authorized, reviewOpened, reviewApproved], 'pending', onShipment).status).toBe('authorized');
  });

  it('a lost dispute marks the order failed whatever else holds it', () => {
    expect(run([succeeded, reviewOpened, disputeOpened, { ...disputeWon, status: 'lost' }]).status).toBe('failed');
  });

  it('the shop moving a held order on answers the holds only it can end, and is where later holds return to', () => {
    const mismatch: PaymentFact = { ...succeeded, amountMatches: false };
    const held = run([mismatch]);
    expect(held.status).toBe('on-hold');
    // The shop sorts the mismatch out by hand and completes the order; a review later opens and is approved.
    let state = held.state;
    let status = 'completed';
    for (const fact of [reviewOpened, reviewApproved]) {
      const before = observeShop(state, status);
      const next = nextStatus(status, before, applyFact(before, fact).state, settings);
      state = next.state;
      status = next.status ?? status;
    }
    expect(status).toBe('completed');
  });

  it('a status the shop set outside the model (cancelled, refunded) is never changed by a hold', () => {
    expect(run([reviewOpened], 'cancelled').status).toBe('cancelled');
    expect(run([disputeOpened], 'refunded').status).toBe('refunded');
  });
});

describe('each fact applies once, and never behind a newer one', () => {
  it('no number of failures on one order lets the oldest apply again', () => {
    const failures = Array.from({ length: 105 }, (_, i) => failure(1000 + i));
    const { outcomes } = run([...failures, failures[0]!, failures[50]!]);
    expect(outcomes.slice(0, 105).every((o) => o === 'applied')).toBe(true);
    expect(outcomes.slice(105)).toEqual(['stale', 'stale']);
  });

  it('two failures in the same second are both recorded, and each only once', () => {
    const { outcomes } = run([failure(500, 'ch_a'), failure(500, 'ch_b'), failure(500, 'ch_a')]);
    expect(outcomes).toEqual(['applied', 'applied', 'duplicate']);
  });

  it('a failure older than a debit in progress is stale; a newer failure returns the order to pending', () => {
    const processing: PaymentFact = { kind: 'processing', at: 300, intentId: PI, chargeId: 'ch_sepa' };
    const held = run([failure(200), processing, failure(200)]);
    expect(held.outcomes).toEqual(['applied', 'applied', 'stale']);
    expect(held.status).toBe('on-hold');
    expect(run([failure(200), processing, failure(400)]).status).toBe('pending');
  });

  it('a review or dispute of a payment closed before it opened: the late opening is stale', () => {
    expect(run([succeeded, reviewApproved, reviewOpened]).outcomes).toEqual(['applied', 'applied', 'stale']);
    expect(run([succeeded, disputeWon, disputeOpened]).outcomes).toEqual(['applied', 'applied', 'duplicate']);
  });
});

describe('an authorization and its end, in any order', () => {
  const lapse: PaymentFact = { kind: 'canceled', at: 150, intentId: PI, lapsed: true };

  it('a lapse delivered before its authorization ends where the two in order end: failed, nothing held', () => {
    const inOrder = run([authorized, lapse]);
    const reversed = run([lapse, authorized]);
    expect(inOrder.status).toBe('failed');
    expect(reversed.status).toBe(inOrder.status);
    expect(holdsOf(reversed.state).size).toBe(0);
  });

  it('a lapsed authorization does not fail the order again once the customer pays with a new one', () => {
    const lapsed = run([authorized, lapse]);
    // The shop sets the order back to pending; the customer authorizes a new intent, which Radar reviews first.
    let state = lapsed.state;
    let status = 'pending';
    const second: PaymentFact[] = [
      { kind: 'review_opened', reviewId: 'prv_2', intentId: 'pi_2' },
      { kind: 'review_closed', reviewId: 'prv_2', intentId: 'pi_2', closedReason: 'approved' },
      { kind: 'authorized', at: 300, intentId: 'pi_2', chargeId: 'ch_2' },
    ];
    for (const fact of second) {
      const before = observeShop(state, status);
      const applied = applyFact(before, fact);
      expect(applied.outcome).toBe('applied');
      const next = nextStatus(status, before, applied.state, settings);
      state = next.state;
      status = next.status ?? status;
    }
    expect(status).toBe('on-hold');
    expect([...holdsOf(state)]).toEqual(['capture']);
  });

  it('a mismatched capture of the authorization leaves nothing to capture', () => {
    const { state } = run([authorized, { ...succeeded, amountMatches: false }]);
    expect([...holdsOf(state)]).toEqual(['mismatch']);
  });
});

describe('a lost dispute', () => {
  it('fails the order when it is lost, and never again once the shop has moved it on', () => {
    const lost: PaymentFact = { ...disputeWon, status: 'lost' };
    const failed = run([succeeded, disputeOpened, lost]);
    expect(failed.status).toBe('failed');
    // The shop completes the order anyway; a later review comes and goes.
    const before = observeShop(failed.state, 'completed');
    const opened = nextStatus('completed', before, applyFact(before, reviewOpened).state, settings);
    const closedBefore = observeShop(opened.state, opened.status ?? 'completed');
    const closed = nextStatus(opened.status ?? 'completed', closedBefore, applyFact(closedBefore, reviewApproved).state, settings);
    expect(closed.status ?? opened.status).toBe('completed');
  });
});

describe('order of delivery never matters', () => {
  const lifeOfOnePayment: PaymentFact[] = [authorized, reviewOpened, reviewApproved, succeeded, disputeOpened, disputeWon];
  it('every permutation of one payment\'s facts, each possibly delivered twice, ends where the in-order run ends', () => {
    const inOrder = run(lifeOfOnePayment);
    fc.assert(
      fc.property(fc.shuffledSubarray(lifeOfOnePayment.map((_, i) => i), { minLength: lifeOfOnePayment.length }), fc.array(fc.nat(lifeOfOnePayment.length - 1), { maxLength: 4 }), (order, repeats) => {
        const facts = [...order, ...repeats].map((i) => lifeOfOnePayment[i]!);
        const result = run(facts);
        expect(result.status).toBe(inOrder.status);
        expect([...holdsOf(result.state)]).toEqual([...holdsOf(inOrder.state)]);
      }),
      { seed: 26, numRuns: 300 },
    );
  });
});

describe('order of delivery never matters, for an authorization that lapses either', () => {
  const lapse: PaymentFact = { kind: 'canceled', at: 150, intentId: PI, lapsed: true };
  const lifeOfALapse: PaymentFact[] = [authorized, reviewOpened, reviewApproved, lapse];
  it('every permutation, with repeats, ends where the in-order run ends', () => {
    const inOrder = run(lifeOfALapse);
    fc.assert(
      fc.property(fc.shuffledSubarray(lifeOfALapse.map((_, i) => i), { minLength: lifeOfALapse.length }), fc.array(fc.nat(lifeOfALapse.length - 1), { maxLength: 3 }), (order, repeats) => {
        const result = run([...order, ...repeats].map((i) => lifeOfALapse[i]!));
        expect(result.status).toBe(inOrder.status);
        expect([...holdsOf(result.state)]).toEqual([...holdsOf(inOrder.state)]);
      }),
      { seed: 27, numRuns: 200 },
    );
  });
});

describe('reading the facts', () => {
  it('an unreadable value is told apart from an absent one', () => {
    expect(parsePaymentState(undefined)).toBeUndefined();
    expect(parsePaymentState('{not json')).toBe('unreadable');
    expect(parsePaymentState('[]')).toBe('unreadable');
    expect(parsePaymentState({ reviews: {} })).toBe('unreadable');
    expect(parsePaymentState('{"reviews":{},"disputes":{}}')).toEqual({ reviews: {}, disputes: {} });
    // Whole: a garbled entry inside is unreadable too, never a crash further on.
    expect(parsePaymentState('{"reviews":{"prv_1":null},"disputes":{}}')).toBe('unreadable');
    expect(parsePaymentState('{"reviews":{},"disputes":{},"attempt":{"kind":"failed","at":1,"intentId":"pi"}}')).toBe('unreadable');
  });

  it('rebuilds from the meta an older order shows, conservatively: a failure dates from when it was written', () => {
    const state = rebuildPaymentState({
      status: 'on-hold',
      checkoutIntentId: PI,
      failedAt: '2026-11-20T10:00:00.000Z',
      reviewId: 'prv_9',
      disputeId: 'dp_9',
      disputeStatus: 'needs_response',
      statusBeforeHold: 'processing',
      paidIntentId: PI,
      mismatchNote: false,
    });
    expect(state).toMatchObject({ paid: { intentId: PI }, reviews: { prv_9: { open: true } }, disputes: { dp_9: { status: 'needs_response' } }, resume: 'processing' });
    const written = Date.parse('2026-11-20T10:00:00.000Z') / 1000;
    // A shipped order held when its facts were lost returns to a status on its way, not to processing.
    const shipped = rebuildPaymentState({ status: 'on-hold', paidIntentId: PI, disputeId: 'dp_9', mismatchNote: false, shipped: true });
    expect(shipped.resume).toBe('completed');
    const unpaid = rebuildPaymentState({ status: 'pending', checkoutIntentId: PI, failedAt: '2026-11-20T10:00:00.000Z', mismatchNote: false });
    expect(applyFact(unpaid, failure(written - 5)).outcome).toBe('stale');
    expect(applyFact(unpaid, failure(written)).outcome).toBe('stale');
    expect(applyFact(unpaid, failure(written + 5)).outcome).toBe('applied');
  });
});

describe('the transition table', () => {
  it('docs/contract.md quotes the table the code keeps', async () => {
    const { readFileSync } = await import('node:fs');
    const { paymentTransitionsMarkdown } = await import('../model/payment-transitions');
    expect(readFileSync('docs/contract.md', 'utf8')).toContain(paymentTransitionsMarkdown());
  });
});
