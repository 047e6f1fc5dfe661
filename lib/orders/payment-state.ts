/** The payment life as one pure model: facts, the holds they put on the order, its status (docs/contract.md#payment-life). */
import { z } from 'zod';
import { HOLD_STATUSES, ORDER_STATUS, PAID_STATUSES } from '@/lib/order-statuses';

export const PAYMENT_STATE_META = '_cardprovider_payment';

export const CLOSED_DISPUTE_STATUSES: ReadonlySet<string> = new Set(['won', 'lost', 'warning_closed', 'prevented']);

export type Hold = 'review' | 'dispute' | 'capture' | 'mismatch' | 'delayed';

/** The facts as stored on the order; `attempt.ids` is what makes a same-second redelivery known. */
export type PaymentState = z.output<typeof stateSchema>;
type AttemptFact = NonNullable<PaymentState['attempt']>;

export type PaymentFact =
  | { kind: 'failed' | 'processing'; at: number; intentId: string; chargeId: string; eventId?: string }
  | { kind: 'authorized'; at: number; intentId: string; chargeId: string; captureBefore?: number | undefined; released?: boolean }
  | { kind: 'succeeded'; at: number; intentId: string; chargeId: string; amountMatches: boolean }
  | { kind: 'canceled'; at: number; intentId: string; lapsed: boolean }
  | { kind: 'review_opened' | 'review_closed'; reviewId: string; intentId: string; closedReason?: string | undefined }
  | { kind: 'dispute_opened' | 'dispute_closed'; disputeId: string; intentId: string; chargeId: string; status: string };

export type FactOutcome = 'applied' | 'duplicate' | 'stale';

export const emptyPaymentState = (): PaymentState => ({ reviews: {}, disputes: {} });

const REFUNDED_REVIEW_CLOSES: ReadonlySet<string> = new Set(['refunded', 'refunded_as_fraud']);
const reviewHolds = (review: PaymentState['reviews'][string]) => review.open || (REFUNDED_REVIEW_CLOSES.has(review.closedReason ?? '') && !review.released);

export function holdsOf(state: PaymentState): Set<Hold> {
  const holds = new Set<Hold>();
  if (Object.values(state.reviews).some(reviewHolds)) holds.add('review');
  if (Object.values(state.disputes).some((dispute) => !CLOSED_DISPUTE_STATUSES.has(dispute.status))) holds.add('dispute');
  if (state.authorization && !state.authorization.released && !state.paid) holds.add('capture');
  if (state.mismatch && !state.mismatch.released && !state.paid) holds.add('mismatch');
  if (state.attempt?.kind === 'processing' && !state.paid) holds.add('delayed');
  return holds;
}

export function paymentsOf(state: PaymentState, checkoutIntentId: string | undefined): Set<string> {
  const recorded = [state.paid?.intentId, state.authorization?.intentId, state.attempt?.intentId];
  return new Set([checkoutIntentId || undefined, ...recorded].filter((id) => id !== undefined));
}

/** Forward only: an old failure never takes back a newer debit in progress. */
function applyAttempt(state: PaymentState, fact: { kind: AttemptFact['kind']; at: number; intentId: string; chargeId?: string; eventId?: string }): FactOutcome {
  const id = fact.chargeId || fact.eventId || fact.intentId;
  const newest = state.attempt;
  if (newest && newest.at === fact.at && newest.ids.includes(id) && newest.kind === fact.kind) return 'duplicate';
  const older = newest !== undefined && (fact.at < newest.at || (fact.at === newest.at && (newest.wholeSecond || newest.ids.includes(id))));
  const movesMoney = fact.kind === 'succeeded' || fact.kind === 'authorized' || fact.kind === 'canceled';
  if (older && !movesMoney) return 'stale';
  if (!older) {
    state.attempt = newest && newest.at === fact.at && newest.kind === fact.kind
      ? { ...newest, ids: [...newest.ids, id] }
      : { kind: fact.kind, at: fact.at, intentId: fact.intentId, ids: [id] };
  }
  return 'applied';
}

export function applyFact(current: PaymentState, fact: PaymentFact): { state: PaymentState; outcome: FactOutcome } {
  const state: PaymentState = structuredClone(current);
  switch (fact.kind) {
    case 'failed':
    case 'processing': {
      if (state.paid) return { state: current, outcome: 'stale' };
      const outcome = applyAttempt(state, fact);
      return outcome === 'applied' ? { state, outcome } : { state: current, outcome };
    }
    case 'authorized': {
      const known = state.authorization;
      if (known && known.intentId === fact.intentId && (known.chargeId === fact.chargeId || known.chargeId === '')) return { state: current, outcome: 'duplicate' };
      if (state.paid) return { state: current, outcome: 'stale' };
      applyAttempt(state, fact);
      const canceledBefore = state.canceledIntents?.includes(fact.intentId) ?? false;
      state.authorization = {
        intentId: fact.intentId,
        chargeId: fact.chargeId,
        ...(fact.captureBefore ? { captureBefore: fact.captureBefore } : {}),
        ...(fact.released || canceledBefore ? { released: true } : {}),
      };
      return { state, outcome: 'applied' };
    }
    case 'succeeded': {
      if (state.paid?.intentId === fact.intentId) return { state: current, outcome: 'duplicate' };
      if (state.paid) return { state: current, outcome: 'stale' };
      if (!fact.amountMatches) {
        const known = state.mismatch;
        if (known?.intentId === fact.intentId && (known.chargeId === fact.chargeId || known.chargeId === '')) return { state: current, outcome: 'duplicate' };
        applyAttempt(state, fact);
        state.mismatch = { intentId: fact.intentId, chargeId: fact.chargeId };
        // The authorization was captured (for another amount): nothing is left to capture.
        if (state.authorization?.intentId === fact.intentId) state.authorization.released = true;
        return { state, outcome: 'applied' };
      }
      applyAttempt(state, fact);
      state.paid = { intentId: fact.intentId, chargeId: fact.chargeId };
      return { state, outcome: 'applied' };
    }
    case 'canceled': {
      if (state.canceledIntents?.includes(fact.intentId)) return { state: current, outcome: 'duplicate' };
      if (state.paid?.intentId === fact.intentId) return { state: current, outcome: 'stale' };
      state.canceledIntents = [...(state.canceledIntents ?? []), fact.intentId];
      applyAttempt(state, { kind: 'canceled', at: fact.at, intentId: fact.intentId, eventId: `canceled:${fact.intentId}` });
      const authorization = state.authorization;
      if (authorization?.intentId === fact.intentId && !authorization.released) {
        authorization.released = true;
        if (fact.lapsed) authorization.lapsed = true;
      }
      return { state, outcome: 'applied' };
    }
    case 'review_opened':
    case 'review_closed': {
      const known = state.reviews[fact.reviewId];
      // A review closes once and never reopens: an opening delivered after its close is stale.
      if (known && (!known.open || fact.kind === 'review_opened')) return { state: current, outcome: known.open || fact.kind === 'review_closed' ? 'duplicate' : 'stale' };
      state.reviews[fact.reviewId] =
        fact.kind === 'review_opened'
          ? { intentId: fact.intentId, open: true }
          : { intentId: fact.intentId, open: false, closedReason: fact.closedReason ?? 'other' };
      return { state, outcome: 'applied' };
    }
    case 'dispute_opened':
    case 'dispute_closed': {
      const known = state.disputes[fact.disputeId];
      if (known && CLOSED_DISPUTE_STATUSES.has(known.status)) return { state: current, outcome: 'duplicate' };
      if (known && fact.kind === 'dispute_opened') return { state: current, outcome: 'duplicate' };
      state.disputes[fact.disputeId] = { intentId: fact.intentId, chargeId: fact.chargeId, status: fact.status };
      return { state, outcome: 'applied' };
    }
  }
}

const HOLDABLE: ReadonlySet<string> = new Set([ORDER_STATUS.pending, ...HOLD_STATUSES, ...PAID_STATUSES]);

/** An order the shop moved out of its hold status: that answers the holds only it can end (a mismatch). */
export function observeShop(state: PaymentState, currentStatus: string): PaymentState {
  // An order whose authorization ended uncaptured, set back to pending by the shop: the customer pays anew.
  if (currentStatus === ORDER_STATUS.pending && state.attempt?.kind === 'canceled' && state.authorization?.intentId === state.attempt.intentId) {
    const reopened = structuredClone(state);
    delete reopened.authorization;
    return reopened;
  }
  if (holdsOf(state).size === 0 || HOLD_STATUSES.has(currentStatus)) return state;
  const next = structuredClone(state);
  if (next.mismatch) next.mismatch.released = true;
  for (const review of Object.values(next.reviews)) if (!review.open) review.released = true;
  if (HOLDABLE.has(currentStatus)) next.resume = currentStatus;
  else delete next.resume;
  return next;
}

function settledStatus(state: PaymentState): string {
  if (state.resume !== undefined && PAID_STATUSES.has(state.resume)) return state.resume;
  if (state.paid) return ORDER_STATUS.processing;
  // The newest attempt is an authorization that ended uncaptured (lapsed, or cancelled at Stripe): unpaid, and no longer payable with it.
  const ended = state.attempt?.kind === 'canceled' && state.authorization?.intentId === state.attempt.intentId;
  return ended ? ORDER_STATUS.failed : ORDER_STATUS.pending;
}

/** The status after a fact (undefined: unchanged) and the state to store with it; holds are a set. */
export function nextStatus(
  currentStatus: string,
  before: PaymentState,
  after: PaymentState,
  settings: { authorizedStatus: boolean },
): { status: string | undefined; state: PaymentState } {
  const state = structuredClone(after);
  const holds = holdsOf(after);
  const heldNow = HOLD_STATUSES.has(currentStatus);
  const change = (status: string) => ({ status: status === currentStatus ? undefined : status, state });
  const lost = (s: PaymentState) => Object.values(s.disputes).filter((dispute) => dispute.status === 'lost').length;
  if (lost(after) > lost(before)) {
    delete state.resume;
    return HOLDABLE.has(currentStatus) ? change(ORDER_STATUS.failed) : { status: undefined, state };
  }
  if (holds.size > 0) {
    // A payment that does not match the order holds it whatever status it was fetched in (the spec's mismatch row).
    const newMismatch = after.mismatch !== undefined && after.mismatch.chargeId !== before.mismatch?.chargeId;
    if (!HOLDABLE.has(currentStatus) && !newMismatch) return { status: undefined, state };
    if (!heldNow) state.resume = currentStatus;
    return change(settings.authorizedStatus && holds.size === 1 && holds.has('capture') ? ORDER_STATUS.authorized : ORDER_STATUS.onHold);
  }
  delete state.resume;
  if (heldNow) return change(settledStatus(after));
  // An authorization that ended before the order was ever held (its end delivered first): as if in order.
  if (currentStatus === ORDER_STATUS.pending && settledStatus(after) === ORDER_STATUS.failed) return change(ORDER_STATUS.failed);
  if (!before.paid && after.paid && !PAID_STATUSES.has(currentStatus)) return change(ORDER_STATUS.processing);
  return { status: undefined, state };
}

const id = z.string().max(255);
const stateSchema = z.object({
  attempt: z
    .object({
      kind: z.enum(['failed', 'processing', 'authorized', 'succeeded', 'canceled']),
      at: z.number().int().nonnegative(),
      intentId: id,
      ids: z.array(id),
      wholeSecond: z.literal(true).optional(),
    })
    .optional(),
  authorization: z
    .object({ intentId: id, chargeId: id, captureBefore: z.number().optional(), released: z.boolean().optional(), lapsed: z.boolean().optional() })
    .optional(),
  paid: z.object({ intentId: id, chargeId: id }).optional(),
  mismatch: z.object({ intentId: id, chargeId: id, released: z.boolean().optional() }).optional(),
  reviews: z.record(id, z.object({ intentId: id, open: z.boolean(), closedReason: z.string().optional(), released: z.boolean().optional() })),
  disputes: z.record(id, z.object({ intentId: id, chargeId: id, status: z.string() })),
  resume: z.string().optional(),
  canceledIntents: z.array(id).optional(),
});

export function parsePaymentState(raw: unknown): PaymentState | undefined | 'unreadable' {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') return 'unreadable';
  try {
    return stateSchema.safeParse(JSON.parse(raw)).data ?? 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** The meta written before the payment model, each value a string or absent. */
type LegacyField = 'checkoutIntentId' | 'paidIntentId' | 'paidChargeId' | 'authorizedAt' | 'processingAt' | 'failedAt' | 'reviewId'
  | 'reviewClosedReason' | 'disputeId' | 'disputeStatus' | 'statusBeforeHold';
type LegacyPaymentMeta = Partial<Record<LegacyField, string>> & { status: string; mismatchNote: boolean; shipped?: boolean };

const seconds = (iso: string | undefined): number | undefined => {
  const ms = Date.parse(iso ?? '');
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
};

/** Rebuilds the facts from the order's older meta, dating a fact when it was written so no event applies again. */
export function rebuildPaymentState(meta: LegacyPaymentMeta): PaymentState {
  const state = emptyPaymentState();
  const intentId = meta.checkoutIntentId ?? meta.paidIntentId ?? '';
  if (meta.paidIntentId) state.paid = { intentId: meta.paidIntentId, chargeId: meta.paidChargeId ?? '' };
  if (meta.authorizedAt) state.authorization = { intentId, chargeId: '' };
  if (meta.mismatchNote && !state.paid && meta.status === ORDER_STATUS.onHold) state.mismatch = { intentId, chargeId: '' };
  const failedAt = seconds(meta.failedAt) ?? -Infinity;
  const processingAt = seconds(meta.processingAt) ?? -Infinity;
  // The newer of the two (a failure when both are of one second).
  const newest = processingAt > failedAt ? { kind: 'processing' as const, at: processingAt } : { kind: 'failed' as const, at: failedAt };
  if (Number.isFinite(newest.at) && !state.paid) state.attempt = { ...newest, intentId, ids: [], wholeSecond: true };
  const closedReason = meta.reviewClosedReason;
  if (meta.reviewId) state.reviews[meta.reviewId] = closedReason ? { intentId, open: false, closedReason } : { intentId, open: true };
  if (meta.disputeId) state.disputes[meta.disputeId] = { intentId, chargeId: meta.paidChargeId ?? '', status: meta.disputeStatus ?? 'needs_response' };
  // Where the holds return: as the order remembered it, else on its way (`completed`: a status every store has) once shipped.
  const resume = meta.statusBeforeHold ?? (meta.shipped ? ORDER_STATUS.completed : undefined);
  if (resume && holdsOf(state).size > 0) state.resume = resume;
  return state;
}
