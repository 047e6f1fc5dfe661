/**
 * What a refund or a dispute made on Stripe's side does in the demo: the
 * Stripe stand-in's demo controls change the order's paid intent, then the
 * signed event is posted to the service's Stripe webhook, as Stripe would.
 * Shared by `npm run demo:refund` / `demo:dispute` and the demo storefront's
 * back-office buttons, so both do exactly the same.
 * Not part of the production bundle.
 */
import { toMinorUnits } from '../../lib/money';
import { deliverCardEvent, type Delivery } from './webhooks';

/** Where the running demo's pieces are, and the secret Stripe signs its events with. */
export interface CardLifecycleDemo {
  serviceUrl: string;
  stripeUrl: string;
  woocommerceUrl: string;
  stripeWebhookSecret: string;
}

/** The order has no card payment to refund or dispute (nothing changed). */
export class NoCardPaymentError extends Error {}

/** The order has no open dispute to close (nothing changed). */
export class NoOpenDisputeError extends Error {}

/**
 * A stand-in refused a demo call, or did not answer (status 0). The message names the URL, for the
 * terminal helpers; a page shows its own words instead (storefront.ts).
 */
export class DemoCallError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    /** The provider's error code (Stripe's `error.code`, WooCommerce's `code`), when it gave one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

async function read(response: Response, url: string): Promise<unknown> {
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const answer = body as { code?: string; message?: string; error?: { code?: string; message?: string } } | undefined;
    const message = answer?.message ?? answer?.error?.message ?? 'failed';
    throw new DemoCallError(url, response.status, answer?.error?.code ?? answer?.code, `${url} → HTTP ${response.status}: ${message}`);
  }
  return body;
}

async function call(url: string, init?: RequestInit): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch {
    throw new DemoCallError(url, 0, undefined, `${url} did not answer`);
  }
  return read(response, url);
}

export async function demoGet(url: string): Promise<unknown> {
  return call(url);
}

export async function demoPost(url: string, body: unknown): Promise<unknown> {
  return call(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

/** The order's paid payment intent, as the service recorded it on the order. */
async function cardPaymentOf(demo: CardLifecycleDemo, orderId: number, what: string): Promise<{ intentId: string; currency: string }> {
  const order = (await demoGet(`${demo.woocommerceUrl.replace(/\/+$/, '')}/demo/orders/${orderId}`)) as { currency: string; meta: Record<string, unknown> };
  const intentId = order.meta._provider_payment_intent_id ?? order.meta._payment_intent_id;
  if (typeof intentId !== 'string') throw new NoCardPaymentError(`Order ${orderId} has no card payment to ${what}: pay it by card first.`);
  return { intentId, currency: order.currency };
}

/** Posts the signed event to the service's Stripe webhook; a service that does not answer is a DemoCallError. */
async function post(demo: CardLifecycleDemo, event: object): Promise<Delivery> {
  const serviceUrl = demo.serviceUrl.replace(/\/+$/, '');
  try {
    return await deliverCardEvent(serviceUrl, event, demo.stripeWebhookSecret);
  } catch {
    throw new DemoCallError(serviceUrl, 0, undefined, `${serviceUrl} did not answer`);
  }
}

export interface RefundDone {
  intentId: string;
  currency: string;
  delivery: Delivery;
}

/**
 * Refunds the order's card payment in the Stripe stand-in (all that remains, or `amount`, a decimal
 * in the order's currency such as "10.00") and delivers `charge.refunded` to the service.
 */
export async function refundCardPayment(demo: CardLifecycleDemo, orderId: number, amount?: string): Promise<RefundDone> {
  const { intentId, currency } = await cardPaymentOf(demo, orderId, 'refund');
  const minor = amount === undefined ? undefined : toMinorUnits(amount, currency);
  const event = (await demoPost(`${demo.stripeUrl.replace(/\/+$/, '')}/demo/payment_intents/${intentId}/refund`, minor === undefined ? {} : { amount: minor })) as object;
  return { intentId, currency, delivery: await post(demo, event) };
}

export interface DisputeOpened {
  intentId: string;
  disputeId: string;
  delivery: Delivery;
}

/** A cardholder disputes the order's card payment: the Stripe stand-in opens a dispute, `charge.dispute.created` is delivered. */
export async function openCardDispute(demo: CardLifecycleDemo, orderId: number): Promise<DisputeOpened> {
  const { intentId } = await cardPaymentOf(demo, orderId, 'dispute');
  const opened = (await demoPost(`${demo.stripeUrl.replace(/\/+$/, '')}/demo/payment_intents/${intentId}/dispute`, {})) as { dispute: { id: string }; event: object };
  return { intentId, disputeId: opened.dispute.id, delivery: await post(demo, opened.event) };
}

/** Dispute statuses after which a dispute is over (the service records them in `_dispute_status`). */
export const CLOSED_DISPUTE_STATUSES: readonly string[] = ['won', 'lost', 'warning_closed', 'prevented'];

/** The order's open dispute, as the service recorded it on the order (`_dispute_id`, `_dispute_status`). */
export async function openDisputeOf(demo: CardLifecycleDemo, orderId: number): Promise<string> {
  const order = (await demoGet(`${demo.woocommerceUrl.replace(/\/+$/, '')}/demo/orders/${orderId}`)) as { meta: Record<string, unknown> };
  const disputeId = order.meta._dispute_id;
  if (typeof disputeId !== 'string' || CLOSED_DISPUTE_STATUSES.includes(String(order.meta._dispute_status))) {
    throw new NoOpenDisputeError(`No open dispute on order ${orderId}: open one first.`);
  }
  return disputeId;
}

/** The dispute's outcome: the Stripe stand-in closes it, `charge.dispute.closed` is delivered. */
export async function closeCardDispute(demo: CardLifecycleDemo, disputeId: string, outcome: 'won' | 'lost'): Promise<Delivery> {
  const closed = (await demoPost(`${demo.stripeUrl.replace(/\/+$/, '')}/demo/disputes/${encodeURIComponent(disputeId)}/close`, { status: outcome })) as object;
  return post(demo, closed);
}
