/**
 * Model-based test of an order's payment life: generated sequences of lifecycle
 * steps on one or two orders, run against the Stripe and WooCommerce stand-ins through the route
 * handlers, with the events of each Stripe action queued and delivered in a generated order,
 * duplicated, after a flush of the processed-events memory, or with the store's answer lost after it
 * committed. Invariants are checked after every step (cheap ones) and after all events are delivered.
 */
import fc from 'fast-check';
import { GET as reconcileGET } from '@/app/api/cron/reconcile-payments/route';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { POST as refundsPOST } from '@/app/api/store/refunds/route';
import { POST as shippingPOST } from '@/app/api/shipping/webhook/route';
import type { StripeEvent } from '@/stand-ins/stripe/events';
import { StripeApiError, type StripeIntent } from '@/stand-ins/stripe/objects';
import { deliverEvent } from '../support/card-events';
import { TEST_CRON_SECRET, useTestEnv } from '../support/env';
import type { Providers } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { callStore, TEST_STORE_CALLBACK_SECRET, testGateway } from '../support/store-callbacks';

/** The sequences that once moved money or the order wrongly (each has a case below, run on every `npm test`). */
export type FoundDefect =
  /** The plugin's refund call loses its answer twice and WooCommerce drops its refund; the same click again must not refund again. */
  | 'admin-refund-answer-lost'
  /** As above, with `charge.refunded` handled while WooCommerce still holds the refund it drops: it must still be recorded. */
  | 'refund-event-while-admin-refund-held'
  /** The customer authorizes an order cancelled while they were paying: the authorization must be released. */
  | 'authorize-cancelled-order'
  /** A review not recorded yet when money moves or its payment arrives: the flagged payment must not be captured meanwhile. */
  | 'review-delivered-late'
  /** "Capture charge" from the admin while a Radar review is open: refused. */
  | 'admin-capture-during-review'
  /** A dispute of the payment captured at shipping, before its success is recorded: the order's dispute. */
  | 'dispute-delivered-early'
  /** A dispute opened while a review holds the order: once both end, nothing holds it. */
  | 'dispute-during-review'
  /** A review opened while a dispute holds the order: the dispute won leaves it held by the review. */
  | 'review-during-dispute'
  /** A refund, dispute or review of a payment held because it does not match the order: recorded, never "not paid yet" for ever. */
  | 'events-of-mismatched-payment'
  /** A bank debit started after a declined attempt: the order is held for it, not left pending. */
  | 'processing-after-failure'
  /** `charge.refunded` of a payment captured at shipping, delivered before its `payment_intent.succeeded`: recorded. */
  | 'refund-before-capture-recorded';

const steps = (...list: Step[]) => list;
const none = 'none' as const;

/** The shrunk case each defect was found with, run on every `npm test` besides the generated ones. */
export const FOUND_WITH: Record<FoundDefect, Scenario[]> = {
  'admin-refund-answer-lost': [
    {
      capture: 'automatic',
      orders: 1,
      steps: steps(
        { kind: 'pay', order: 0 },
        { kind: 'deliver', pick: 0, fault: none },
        { kind: 'manualRefund', order: 0, amount: '10.00' },
        { kind: 'adminRefund', order: 0, amount: '10.00', fault: 'lost' },
        { kind: 'adminRefund', order: 0, amount: '10.00', fault: none },
      ),
    },
  ],
  'refund-event-while-admin-refund-held': [
    {
      capture: 'automatic',
      orders: 1,
      steps: steps({ kind: 'pay', order: 0 }, { kind: 'deliver', pick: 0, fault: none }, { kind: 'adminRefund', order: 0, amount: '5.00', fault: 'lostAfterEvent' }),
    },
  ],
  'authorize-cancelled-order': [{ capture: 'on_shipment', orders: 1, steps: steps({ kind: 'adminCancel', order: 0, fault: none }, { kind: 'pay', order: 0 }) }],
  'review-delivered-late': [
    {
      capture: 'on_shipment',
      orders: 1,
      steps: steps(
        { kind: 'pay', order: 0 },
        { kind: 'reviewOpen', order: 0 },
        { kind: 'deliver', pick: 1, fault: none },
        { kind: 'deliver', pick: 0, fault: none },
        { kind: 'ship', order: 0, pkg: 1, fault: none },
      ),
    },
    { capture: 'manual', orders: 1, steps: steps({ kind: 'pay', order: 0 }, { kind: 'reviewOpen', order: 0 }, { kind: 'adminCancel', order: 0, fault: none }) },
  ],
  'admin-capture-during-review': [
    { capture: 'manual', orders: 1, steps: steps({ kind: 'pay', order: 0 }, { kind: 'reviewOpen', order: 0 }, { kind: 'adminCapture', order: 0, fault: none }) },
  ],
  'dispute-delivered-early': [
    {
      capture: 'on_shipment',
      orders: 1,
      steps: steps(
        { kind: 'pay', order: 0 },
        { kind: 'deliver', pick: 0, fault: none },
        { kind: 'ship', order: 0, pkg: 1, fault: none },
        { kind: 'disputeOpen', order: 0 },
        { kind: 'deliver', pick: 1, fault: none },
      ),
    },
  ],
  'dispute-during-review': [
    {
      capture: 'automatic',
      orders: 1,
      steps: steps({ kind: 'pay', order: 0 }, { kind: 'reviewOpen', order: 0 }, { kind: 'disputeOpen', order: 0 }, { kind: 'disputeClose', order: 0, outcome: 'won' }),
    },
  ],
  'review-during-dispute': [
    {
      capture: 'automatic',
      orders: 1,
      steps: steps({ kind: 'pay', order: 0 }, { kind: 'disputeOpen', order: 0 }, { kind: 'reviewOpen', order: 0 }, { kind: 'disputeClose', order: 0, outcome: 'won' }),
    },
  ],
  'events-of-mismatched-payment': [
    { capture: 'automatic', orders: 1, steps: steps({ kind: 'editTotal', order: 0 }, { kind: 'pay', order: 0 }, { kind: 'dashboardRefund', order: 0, amount: '5.00' }) },
  ],
  'processing-after-failure': [{ capture: 'automatic', orders: 1, steps: steps({ kind: 'decline', order: 0 }, { kind: 'process', order: 0 }) }],
  'refund-before-capture-recorded': [
    {
      capture: 'on_shipment',
      orders: 1,
      steps: steps(
        { kind: 'pay', order: 0 },
        { kind: 'deliver', pick: 0, fault: none },
        { kind: 'ship', order: 0, pkg: 1, fault: none },
        { kind: 'dashboardRefund', order: 0, amount: '5.00' },
        { kind: 'deliver', pick: 1, fault: none },
      ),
    },
  ],
};

export type CaptureMode = 'automatic' | 'on_shipment' | 'manual';
export type Fault = 'none' | 'dup' | 'flush' | 'lost';
export type Amount = '5.00' | '10.00' | 'rest';

export type Step =
  | { kind: 'pay'; order: number }
  | { kind: 'decline'; order: number }
  | { kind: 'editTotal'; order: number }
  | { kind: 'process'; order: number }
  | { kind: 'settle'; order: number; ok: boolean }
  | { kind: 'reviewOpen'; order: number }
  | { kind: 'reviewApprove'; order: number }
  | { kind: 'disputeOpen'; order: number }
  | { kind: 'disputeClose'; order: number; outcome: 'won' | 'lost' }
  | { kind: 'dashboardRefund'; order: number; amount: Amount }
  | { kind: 'adminRefund'; order: number; amount: Amount; fault: 'none' | 'lost' | 'lostAfterEvent' }
  | { kind: 'manualRefund'; order: number; amount: '5.00' | '10.00' }
  | { kind: 'ship'; order: number; pkg: 1 | 2; fault: Fault }
  | { kind: 'adminCapture'; order: number; fault: Fault }
  | { kind: 'adminCancel'; order: number; fault: Fault }
  | { kind: 'deliver'; pick: number; fault: Fault }
  | { kind: 'redeliver'; pick: number; flush: boolean }
  | { kind: 'reconcile'; flush: boolean };

export interface Scenario {
  capture: CaptureMode;
  orders: 1 | 2;
  steps: Step[];
}

export function formatStep(step: Step): string {
  const { kind, ...rest } = step as Step & Record<string, unknown>;
  const args = Object.entries(rest)
    .filter(([key, value]) => !(key === 'fault' && value === 'none'))
    .map(([key, value]) => (key === 'order' ? `#${String(value)}` : `${key}=${String(value)}`));
  return `${kind}(${args.join(' ')})`;
}

export function formatScenario(scenario: Scenario): string {
  return `capture=${scenario.capture} orders=${scenario.orders}\n${scenario.steps.map((s, i) => `  ${i + 1}. ${formatStep(s)}`).join('\n')}`;
}

// Steps are printed as their formatted line in fast-check's counterexample.
const readable = <T extends Step>(step: T): T => Object.assign(step, { [fc.toStringMethod]: () => formatStep(step) });

export function scenarioArbitrary(maxSteps = 24): fc.Arbitrary<Scenario> {
  const order = fc.constantFrom(0, 0, 1);
  const fault = fc.constantFrom<Fault>('none', 'none', 'none', 'dup', 'flush', 'lost');
  const amount = fc.constantFrom<Amount>('5.00', '10.00', 'rest');
  const action: fc.Arbitrary<Step> = fc.oneof(
    { weight: 4, arbitrary: order.map((o) => ({ kind: 'pay' as const, order: o })) },
    { weight: 2, arbitrary: order.map((o) => ({ kind: 'decline' as const, order: o })) },
    { weight: 1, arbitrary: order.map((o) => ({ kind: 'editTotal' as const, order: o })) },
    { weight: 2, arbitrary: order.map((o) => ({ kind: 'process' as const, order: o })) },
    { weight: 3, arbitrary: fc.record({ order, ok: fc.boolean() }).map((r) => ({ kind: 'settle' as const, ...r })) },
    { weight: 2, arbitrary: order.map((o) => ({ kind: 'reviewOpen' as const, order: o })) },
    { weight: 3, arbitrary: order.map((o) => ({ kind: 'reviewApprove' as const, order: o })) },
    { weight: 2, arbitrary: order.map((o) => ({ kind: 'disputeOpen' as const, order: o })) },
    { weight: 4, arbitrary: fc.record({ order, outcome: fc.constantFrom<'won' | 'lost'>('won', 'lost') }).map((r) => ({ kind: 'disputeClose' as const, ...r })) },
    { weight: 3, arbitrary: fc.record({ order, amount }).map((r) => ({ kind: 'dashboardRefund' as const, ...r })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ order, amount, fault: fc.constantFrom<'none' | 'lost' | 'lostAfterEvent'>('none', 'none', 'lost', 'lostAfterEvent') })
        .map((r) => ({ kind: 'adminRefund' as const, ...r })),
    },
    { weight: 1, arbitrary: fc.record({ order, amount: fc.constantFrom<'5.00' | '10.00'>('5.00', '10.00') }).map((r) => ({ kind: 'manualRefund' as const, ...r })) },
    { weight: 2, arbitrary: fc.record({ order, pkg: fc.constantFrom<1 | 2>(1, 2), fault }).map((r) => ({ kind: 'ship' as const, ...r })) },
    { weight: 2, arbitrary: fc.record({ order, fault }).map((r) => ({ kind: 'adminCapture' as const, ...r })) },
    { weight: 1, arbitrary: fc.record({ order, fault }).map((r) => ({ kind: 'adminCancel' as const, ...r })) },
    { weight: 8, arbitrary: fc.record({ pick: fc.nat(7), fault }).map((r) => ({ kind: 'deliver' as const, ...r })) },
    { weight: 2, arbitrary: fc.record({ pick: fc.nat(7), flush: fc.boolean() }).map((r) => ({ kind: 'redeliver' as const, ...r })) },
    { weight: 1, arbitrary: fc.boolean().map((flush) => ({ kind: 'reconcile' as const, flush })) },
  );
  return fc.record({
    capture: fc.constantFrom<CaptureMode>('automatic', 'automatic', 'on_shipment', 'manual'),
    orders: fc.constantFrom<1 | 2>(1, 2),
    steps: fc.array(action.map(readable), { minLength: 1, maxLength: maxSteps, size: 'max' }),
  }).map((s) => ({ ...s, steps: s.orders === 1 ? s.steps.map((step) => ('order' in step ? readable({ ...step, order: 0 }) : step)) : s.steps }));
}

export interface Violation {
  invariant: string;
  detail: string;
  /** 1-based step after which it was seen; 0 for the final check. */
  step: number;
}

const ORDER_IDS = [7101, 7102];
const CLOSED_DISPUTE = new Set(['won', 'lost', 'warning_closed', 'prevented']);
const TERMINAL = new Set(['cancelled', 'refunded', 'failed']);
const HOLD_STATUSES = new Set(['on-hold', 'authorized']);

const MODEL_ENV = (capture: CaptureMode) => ({
  STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET,
  CARD_LIFECYCLE_EVENTS: 'refunds,disputes,async,reviews',
  STRIPE_CAPTURE: capture === 'automatic' ? undefined : capture,
  CRON_SECRET: TEST_CRON_SECRET,
});

/** A real Redis for the service's shared state: its own key prefix, flushed by deleting that prefix's keys. */
export interface ModelRedis {
  url: string;
  prefix: string;
  flush(): Promise<void>;
}

/** One run: the world (stand-ins behind the route handlers), its event queue, and the invariants seen broken. */
export class PaymentLife {
  readonly violations: Violation[] = [];
  /** Events Stripe has not had a 2xx for: Stripe keeps retrying them. */
  private pending: StripeEvent[] = [];
  private delivered: StripeEvent[] = [];
  private seenEvents = 0;
  private readonly intents: string[] = [];
  private stepNo = 0;
  readonly log: string[] = [];

  constructor(
    private readonly providers: Providers,
    readonly scenario: Scenario,
    private readonly redis?: ModelRedis,
  ) {}

  private get stripe() {
    return this.providers.stripe;
  }

  private get woo() {
    return this.providers.woo;
  }

  private violate(invariant: string, detail: string): void {
    if (!this.violations.some((v) => v.invariant === invariant && v.detail === detail)) this.violations.push({ invariant, detail, step: this.stepNo });
  }

  private env(): void {
    useTestEnv({ ...MODEL_ENV(this.scenario.capture), ...(this.redis ? { REDIS_URL: this.redis.url, REDIS_KEY_PREFIX: this.redis.prefix } : {}) });
  }

  /** A Redis flush (its prefix's keys deleted), or a restart without Redis: the memory of processed events is gone, the orders stay. */
  private async flush(): Promise<void> {
    if (this.redis) await this.redis.flush();
    else this.env();
  }

  async setup(): Promise<void> {
    this.providers.reset({ customStatuses: ['shipped', 'awaiting_shipment', 'authorized'] });
    this.env();
    this.woo.gateway = testGateway();
    this.watchStripe();
    this.watchStore();
    for (let i = 0; i < this.scenario.orders; i += 1) {
      const orderId = ORDER_IDS[i]!;
      // A registered customer: a declined payment restores their cart (once per decline).
      this.woo.seedCustomer({ id: 40 + i, email: `customer${i}@example.test` });
      this.woo.seed({ id: orderId, customer_id: 40 + i, lines: [{ total: '20.00' }, { total: '10.00' }] });
      const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
      if (response.status !== 200) throw new Error(`checkout of order ${orderId} answered ${response.status}`);
      this.intents.push(((await response.json()) as { payment_intent_id: string }).payment_intent_id);
    }
  }

  /**
   * Stripe's side effects the stand-in leaves out, and the capture guard checked at the moment money
   * moves: a full refund or a dispute closes the charge's open review (`refunded`, `disputed`), as Radar does.
   */
  private watchStripe(): void {
    const stripe = this.stripe;
    const capture = stripe.capture.bind(stripe);
    stripe.capture = (id, params, onOutcome) => {
      const orderId = Number(stripe.intents.get(id)?.metadata.shop_order_id);
      const status = this.woo.orders.get(orderId)?.status;
      if (status === 'cancelled') this.violate('no-capture-on-cancelled-order', `intent ${id} of order ${orderId} captured while the order is cancelled`);
      if (this.openReview(id)) this.violate('no-capture-during-review', `intent ${id} of order ${orderId} captured while review ${this.openReview(id)} is open`);
      return capture(id, params, onOutcome);
    };
    const refund = stripe.refund.bind(stripe);
    stripe.refund = (intentId, amount, metadata) => {
      const result = refund(intentId, amount, metadata);
      const review = this.openReview(intentId);
      const charge = stripe.charges.get(String(result.refund.charge));
      // Only a full refund is taken as closing the review (whether a partial one does is not documented).
      if (review && charge && charge.amount_refunded >= charge.amount) stripe.closeReview(review, 'refunded');
      return result;
    };
  }

  /**
   * The event being delivered, and how many order writes that changed something each event caused: a
   * redelivery, a duplicate or a retry after a lost answer must find the event applied and change nothing.
   */
  private delivering: string | undefined;
  private readonly changesByEvent = new Map<string, number>();

  private watchStore(): void {
    const woo = this.woo;
    const comparable = (id: number) => {
      const { date_modified, date_modified_gmt, ...rest } = woo.orders.get(id) as unknown as Record<string, unknown>;
      return JSON.stringify(rest);
    };
    const update = woo.update.bind(woo);
    woo.update = (id, body) => {
      const before = woo.orders.has(id) ? comparable(id) : '';
      const result = update(id, body);
      if (this.delivering && comparable(id) !== before) {
        const count = (this.changesByEvent.get(this.delivering) ?? 0) + 1;
        this.changesByEvent.set(this.delivering, count);
        if (count > 1) this.violate('event-applies-once', `event ${this.delivering} changed order ${id} ${count} times`);
      }
      return result;
    };
    const restoreCart = woo.restoreCart.bind(woo);
    woo.restoreCart = (customerId, orderId, key) => {
      const result = restoreCart(customerId, orderId, key);
      if (this.delivering && !result.replayed) {
        const key = `cart:${this.delivering}`;
        const count = (this.changesByEvent.get(key) ?? 0) + 1;
        this.changesByEvent.set(key, count);
        if (count > 1) this.violate('event-applies-once', `event ${this.delivering} restored the cart of order ${orderId} ${count} times`);
      }
      return result;
    };
  }

  private openReview(intentId: string): string | undefined {
    return [...this.stripe.reviews.values()].find((r) => r.payment_intent === intentId && r.open)?.id;
  }

  private openDispute(intentId: string): string | undefined {
    return [...this.stripe.disputes.values()].find((d) => d.payment_intent === intentId && !CLOSED_DISPUTE.has(d.status))?.id;
  }

  private collectEvents(): void {
    const all = this.stripe.events.events;
    this.pending.push(...all.slice(this.seenEvents));
    this.seenEvents = all.length;
  }

  private intent(order: number): StripeIntent {
    return this.stripe.retrieve(this.intents[order]!);
  }

  private orderId(order: number): number {
    return ORDER_IDS[order]!;
  }

  private cents(order: number, amount: Amount): number {
    const intent = this.intent(order);
    const charge = intent.latest_charge ? this.stripe.charges.get(intent.latest_charge) : undefined;
    const remaining = charge ? charge.amount - charge.amount_refunded : intent.amount_received;
    return amount === 'rest' ? remaining : Math.round(Number(amount) * 100);
  }

  /** The order's total in cents (30.00 unless the shop removed an item). */
  private totalCents(order: number): number {
    return Math.round(Number(this.woo.orders.get(this.orderId(order))!.total) * 100);
  }

  private stripeRefundedCents(intentId: string): number {
    return [...this.stripe.refunds.values()].filter((r) => r.payment_intent === intentId && r.status === 'succeeded').reduce((sum, r) => sum + r.amount, 0);
  }

  /** WooCommerce refunds not tied to a Stripe refund ("Refund manually"). */
  private manualCents(order: number): number {
    const refunds = this.woo.refunds.get(this.orderId(order)) ?? [];
    return refunds.filter((r) => !r.meta_data.some((m) => m.key === '_provider_refund_id')).reduce((sum, r) => sum + Math.round(Number(r.amount) * 100), 0);
  }

  /** Runs `call` under a fault: twice at once, after a flush, or with the store's answer to its write lost (then called again, as its sender would). */
  private async faulted<T>(fault: Fault, call: () => Promise<T>, retryOnLost = true): Promise<T> {
    if (fault === 'dup') return (await Promise.all([call(), call()]))[0];
    if (fault === 'flush') await this.flush();
    if (fault === 'lost') {
      this.providers.storeFaults.inject({ kind: 'reset', method: 'PUT', path: /\/orders\/\d+$/, commit: 'after' });
      try {
        const first = await call();
        this.providers.storeFaults.clear();
        return retryOnLost ? await call() : first;
      } finally {
        this.providers.storeFaults.clear();
      }
    }
    return call();
  }

  private async deliver(event: StripeEvent, fault: Fault): Promise<boolean> {
    this.delivering = event.id;
    try {
      return await this.deliverAs(event, fault);
    } finally {
      this.delivering = undefined;
    }
  }

  private async deliverAs(event: StripeEvent, fault: Fault): Promise<boolean> {
    const statuses = await this.faulted(fault === 'dup' ? 'none' : fault, async () => [(await deliverEvent(event)).status], false);
    if (fault === 'dup') statuses.push(...(await Promise.all([deliverEvent(event), deliverEvent(event)])).map((r) => r.status));
    const ok = statuses.some((s) => s >= 200 && s < 300);
    this.log.push(`    ${event.type} ${event.id.slice(0, 10)} -> ${statuses.join(',')}`);
    if (ok) {
      this.pending = this.pending.filter((e) => e.id !== event.id);
      if (!this.delivered.includes(event)) this.delivered.push(event);
    }
    return ok;
  }

  async run(step: Step): Promise<void> {
    this.stepNo += 1;
    this.log.push(`${this.stepNo}. ${formatStep(step)}`);
    try {
      await this.apply(step);
    } catch (error) {
      if (!(error instanceof StripeApiError)) throw error;
      this.log.push(`    skipped: ${error.message}`);
    }
    this.collectEvents();
    this.checkWrittenOnce();
  }

  private async apply(step: Step): Promise<void> {
    const s = this.stripe;
    switch (step.kind) {
      case 'pay': {
        const intent = this.intent(step.order);
        if (intent.status !== 'requires_payment_method') return void this.log.push('    skipped: nothing to pay');
        // A customer does not pay a cancelled order with automatic capture (out of this model: no hold to release).
        const cancelled = this.woo.get(this.orderId(step.order)).status === 'cancelled';
        if (cancelled && intent.capture_method !== 'manual') return void this.log.push('    skipped: order cancelled');
        if (intent.capture_method === 'manual') s.authorize(intent.id);
        else s.succeed(intent.id);
        return;
      }
      case 'editTotal': {
        // The shop removes an item while the customer pays the amount checkout asked for: the payment will not match.
        const intent = this.intent(step.order);
        const order = this.woo.orders.get(this.orderId(step.order))!;
        if (this.scenario.capture !== 'automatic' || intent.status !== 'requires_payment_method' || order.status !== 'pending' || order.line_items.length < 2) {
          return void this.log.push('    skipped');
        }
        order.line_items = order.line_items.slice(0, 1);
        order.total = '20.00';
        return;
      }
      case 'decline': {
        const intent = this.intent(step.order);
        if (intent.status !== 'requires_payment_method') return void this.log.push('    skipped');
        s.fail(intent.id);
        return;
      }
      case 'process': {
        const intent = this.intent(step.order);
        // A bank debit: no manual capture for it.
        if (intent.status !== 'requires_payment_method' || intent.capture_method === 'manual') return void this.log.push('    skipped');
        if (this.woo.get(this.orderId(step.order)).status === 'cancelled') return;
        s.process(intent.id);
        return;
      }
      case 'settle': {
        const intent = this.intent(step.order);
        if (intent.status !== 'processing') return void this.log.push('    skipped');
        if (step.ok) s.succeed(intent.id);
        else s.fail(intent.id, 'The bank account could not be debited.');
        return;
      }
      case 'reviewOpen': {
        const intent = this.intent(step.order);
        // Radar reviews a payment once, when it is made.
        if ([...s.reviews.values()].some((r) => r.payment_intent === intent.id)) return void this.log.push('    skipped');
        s.openReview(intent.id);
        return;
      }
      case 'reviewApprove': {
        const review = this.openReview(this.intents[step.order]!);
        if (!review) return void this.log.push('    skipped');
        s.closeReview(review, 'approved');
        return;
      }
      case 'disputeOpen': {
        const intent = this.intent(step.order);
        const charge = intent.latest_charge ? s.charges.get(intent.latest_charge) : undefined;
        if ([...s.disputes.values()].some((d) => d.payment_intent === intent.id)) return void this.log.push('    skipped');
        if (charge && charge.amount_refunded >= charge.amount) return void this.log.push('    skipped: refunded');
        s.dispute(intent.id);
        const review = this.openReview(intent.id);
        if (review) s.closeReview(review, 'disputed');
        return;
      }
      case 'disputeClose': {
        const dispute = this.openDispute(this.intents[step.order]!);
        if (!dispute) return void this.log.push('    skipped');
        s.closeDispute(dispute, step.outcome);
        return;
      }
      case 'dashboardRefund': {
        const intent = this.intent(step.order);
        // Never more than WooCommerce can still record beside its "Refund manually" entries.
        const room = this.totalCents(step.order) - this.manualCents(step.order) - this.stripeRefundedCents(intent.id);
        const amount = Math.min(this.cents(step.order, step.amount), room);
        if (amount <= 0) return void this.log.push('    skipped: nothing left to refund');
        s.refund(intent.id, amount);
        return;
      }
      case 'adminRefund': {
        const orderId = this.orderId(step.order);
        const order = this.woo.get(orderId);
        if (order.payment_method !== 'cardprovider') return void this.log.push('    skipped: no card payment recorded');
        const amount = step.amount === 'rest' ? this.woo.remainingRefund(orderId) : step.amount;
        const intentId = this.intents[step.order]!;
        // A Stripe refund naming a WooCommerce refund that is gone (a lost answer): the same click again must adopt it.
        const orphan = [...s.refunds.values()].find(
          (r) =>
            r.payment_intent === intentId &&
            r.metadata.shop_refund_id !== undefined &&
            !(this.woo.refunds.get(orderId) ?? []).some((w) => String(w.id) === r.metadata.shop_refund_id || w.meta_data.some((m) => m.value === r.id)),
        );
        // The shop never means to pay back more than was paid, counting refunds made by hand or in the dashboard.
        if (this.manualCents(step.order) + this.stripeRefundedCents(intentId) + Math.round(Number(amount) * 100) > this.totalCents(step.order) && !orphan) {
          return void this.log.push('    skipped: more than was paid');
        }
        const before = s.refunds.size;
        const fault = step.fault;
        if (fault !== 'none') {
          // The plugin's wait ran out on both attempts while the service went on: WooCommerce drops its refund.
          this.woo.gateway = testGateway({
            send: async (request) => {
              await refundsPOST(request);
              if (fault === 'lostAfterEvent') {
                this.collectEvents();
                for (const event of this.pending.filter((e) => e.type === 'charge.refunded')) await this.deliver(event, 'none');
              }
              throw new Error('operation timed out');
            },
          });
        }
        try {
          await this.woo.createRefundViaGateway(orderId, { amount, reason: 'model' });
        } catch (error) {
          this.log.push(`    refused: ${(error as Error).message}`);
        } finally {
          this.woo.gateway = testGateway();
        }
        if (orphan && orphan.amount === Math.round(Number(amount) * 100) && s.refunds.size > before) {
          this.violate('admin-refund-retry-adopts', `order ${orderId}: ${amount} refunded again at Stripe although ${orphan.id} of a dropped WooCommerce refund (${orphan.metadata.shop_refund_id}) already paid it`);
        }
        return;
      }
      case 'manualRefund': {
        const orderId = this.orderId(step.order);
        if (this.woo.get(orderId).payment_method !== 'cardprovider') return void this.log.push('    skipped: no card payment recorded');
        // The shop refunds by hand only what Stripe has not paid back (else the customer gets more than they paid).
        if (this.manualCents(step.order) + Math.round(Number(step.amount) * 100) + this.stripeRefundedCents(this.intents[step.order]!) > this.totalCents(step.order)) return void this.log.push('    skipped');
        try {
          this.woo.createRefund(orderId, { amount: step.amount, api_refund: false, reason: 'Refund manually' });
        } catch (error) {
          this.log.push(`    refused: ${(error as Error).message}`);
        }
        return;
      }
      case 'ship': {
        const orderId = this.orderId(step.order);
        const body = { resource_type: 'SHIP_NOTIFY', order_number: String(orderId), shipment_id: orderId * 10 + step.pkg, tracking_number: `T${orderId}-${step.pkg}`, carrier: 'ups' };
        const status = await this.faulted(step.fault, async () => (await shippingPOST(postJson('/api/shipping/webhook', body, { origin: null }))).status);
        this.log.push(`    -> ${status}`);
        return;
      }
      case 'adminCapture': {
        if (this.scenario.capture !== 'manual') return void this.log.push('    skipped: no Capture charge action');
        const answer = await this.faulted(step.fault, () => callStore('capture', { order_id: this.orderId(step.order) }));
        this.log.push(`    -> ${answer.status} ${JSON.stringify(answer.body)}`);
        return;
      }
      case 'adminCancel': {
        const orderId = this.orderId(step.order);
        if (this.woo.get(orderId).status === 'cancelled') return void this.log.push('    skipped');
        // What the admin's status change does: WooCommerce saves it, then the plugin's hook calls the service.
        this.woo.update(orderId, { status: 'cancelled' });
        const answer = await this.faulted(step.fault, () => callStore('cancelAuthorization', { order_id: orderId }));
        this.log.push(`    -> ${answer.status} ${JSON.stringify(answer.body)}`);
        return;
      }
      case 'deliver': {
        if (this.pending.length === 0) return void this.log.push('    nothing pending');
        await this.deliver(this.pending[step.pick % this.pending.length]!, step.fault);
        return;
      }
      case 'redeliver': {
        if (this.delivered.length === 0) return void this.log.push('    nothing delivered');
        if (step.flush) await this.flush();
        await this.deliver(this.delivered[step.pick % this.delivered.length]!, 'none');
        return;
      }
      case 'reconcile': {
        if (step.flush) await this.flush();
        const response = await reconcileGET(
          new Request('http://localhost:3000/api/cron/reconcile-payments', { headers: { authorization: `Bearer ${TEST_CRON_SECRET}` } }),
        );
        const body = (await response.json()) as { applied?: number; failed?: unknown[] };
        this.log.push(`    -> ${response.status} applied=${String(body.applied)} failed=${JSON.stringify(body.failed ?? [])}`);
        return;
      }
    }
  }

  /** Stripe retries every event without a 2xx: delivered until all are accepted or a round changes nothing. */
  async drain(): Promise<void> {
    this.log.push('drain');
    this.stepNo = 0;
    for (let round = 0; round < 4 && this.pending.length > 0; round += 1) {
      let progress = false;
      for (const event of [...this.pending]) {
        if (await this.deliver(event, 'none')) progress = true;
        this.collectEvents();
      }
      if (!progress) break;
    }
    for (const event of this.pending) this.violate('every-event-accepted', `${event.type} ${event.id} is never accepted`);
  }

  /** Facts written once: no note twice, no Stripe refund recorded twice, no package twice. */
  checkWrittenOnce(): void {
    for (let i = 0; i < this.scenario.orders; i += 1) {
      const orderId = this.orderId(i);
      const order = this.woo.get(orderId);
      const notes = (this.woo.notes.get(orderId) ?? []).map((n) => n.note);
      for (const note of new Set(notes)) {
        if (notes.filter((n) => n === note).length > 1) this.violate('note-once', `order ${orderId}: note written twice: "${note.slice(0, 90)}"`);
      }
      const lines = order.customer_note.split('\n').filter((l) => l.includes('Tracking Number'));
      for (const line of new Set(lines)) {
        if (lines.filter((l) => l === line).length > 1) this.violate('package-once', `order ${orderId}: customer note line twice: "${line}"`);
      }
      const raw = order.meta_data.find((m) => m.key === '_shipment_packages')?.value;
      if (typeof raw === 'string') {
        const keys = (JSON.parse(raw) as { key: string }[]).map((p) => p.key);
        if (new Set(keys).size !== keys.length) this.violate('package-once', `order ${orderId}: packages ${keys.join(',')}`);
      }
      const tied = (this.woo.refunds.get(orderId) ?? []).map((r) => r.meta_data.find((m) => m.key === '_provider_refund_id')?.value).filter(Boolean);
      if (new Set(tied).size !== tied.length) this.violate('refund-once', `order ${orderId}: one Stripe refund recorded twice (${tied.join(',')})`);
    }
  }

  /** After every event is delivered: what Stripe holds and what the order shows agree. */
  checkFinal(): void {
    this.stepNo = 0;
    this.checkWrittenOnce();
    for (let i = 0; i < this.scenario.orders; i += 1) {
      const orderId = this.orderId(i);
      const order = this.woo.get(orderId);
      const intent = this.intent(i);
      const meta = (key: string) => order.meta_data.find((m) => m.key === key)?.value;

      const stripeRefunded = this.stripeRefundedCents(intent.id);
      const wooRefunds = (this.woo.refunds.get(orderId) ?? []).filter((r) => r.meta_data.some((m) => m.key === '_provider_refund_id'));
      const wooRefunded = wooRefunds.reduce((sum, r) => sum + Math.round(Number(r.amount) * 100), 0);
      if (stripeRefunded !== wooRefunded) {
        this.violate('refunds-agree', `order ${orderId}: Stripe refunded ${stripeRefunded}, WooCommerce refunds tied to Stripe refunds ${wooRefunded}`);
      }

      if (order.status === 'cancelled' && intent.status === 'requires_capture') {
        this.violate('no-authorization-on-cancelled-order', `order ${orderId} is cancelled and intent ${intent.id} still holds ${intent.amount_capturable}`);
      }

      const mismatch = intent.status === 'succeeded' && intent.amount_received !== this.totalCents(i);
      const holds = [
        this.openReview(intent.id) && 'review',
        this.openDispute(intent.id) && 'dispute',
        intent.status === 'requires_capture' && 'authorization',
        intent.status === 'processing' && 'processing',
        mismatch && 'amount mismatch',
      ].filter(Boolean);
      if (!TERMINAL.has(order.status) && holds.length > 0 !== HOLD_STATUSES.has(order.status)) {
        this.violate('on-hold-iff-hold', `order ${orderId} is ${order.status} with holds [${holds.join(',')}] (intent ${intent.status})`);
      }

      const wooPaid = order.date_paid !== null || meta('_provider_payment_intent_id') !== undefined;
      const stripePaid = intent.status === 'succeeded' && intent.amount_received > 0;
      // A payment that does not match the order is held, not recorded as the order's payment (the shop decides).
      if (wooPaid !== (stripePaid && !mismatch)) {
        this.violate('paid-iff-succeeded', `order ${orderId} is ${order.status}, ${wooPaid ? 'paid' : 'not paid'} in WooCommerce; intent ${intent.status}`);
      }
    }
  }
}

export async function runScenario(providers: Providers, scenario: Scenario, redis?: ModelRedis): Promise<PaymentLife> {
  const life = new PaymentLife(providers, scenario, redis);
  await redis?.flush();
  await life.setup();
  for (const step of scenario.steps) await life.run(step);
  await life.drain();
  life.checkFinal();
  return life;
}

export function report(life: PaymentLife): string {
  const lines = life.violations.map((v) => `  [${v.invariant}] ${v.step ? `after step ${v.step}` : 'at the end'}: ${v.detail}`);
  return `invariants broken:\n${lines.join('\n')}\nscenario:\n${formatScenario(life.scenario)}\ntrace:\n${life.log.join('\n')}`;
}
