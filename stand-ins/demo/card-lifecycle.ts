/**
 * What a refund or a dispute made on Stripe's side does in the demo: the
 * Stripe stand-in's demo controls change the order's paid intent, then the
 * signed event is posted to the service's Stripe webhook, as Stripe would.
 * Shared by `npm run demo:refund` / `demo:dispute` and the demo storefront's
 * back-office buttons, so both do exactly the same.
 * Not part of the production bundle.
 */
import { formatMinorUnits, toMinorUnits } from '../../lib/money';
import { deliverCardEvent, type Delivery } from '../webhook-deliveries';

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

/** The shop refused the admin's refund: the message is what the service answered the plugin (Stripe's reason in plain words). */
export class ShopRefundRefusedError extends Error {}

export interface AdminRefundDone {
  /** The WooCommerce refund the shop owner made. */
  refundId: number;
  amount: string;
  /** What the service answered the companion plugin: the Stripe refund it made. */
  delivery: Delivery;
  /** What the service's card webhook answered to the `charge.refunded` Stripe sent after (it records no second refund). */
  event: Delivery | undefined;
}

/**
 * The shop owner's "Refund via Credit Card" in the WooCommerce admin: a refund of the order through the
 * REST API with `api_refund`, so the WooCommerce stand-in asks the companion plugin's gateway to pay the
 * money back, and the gateway signs `POST /api/store/refunds` to the service (../woocommerce/companion-gateway.ts). `amount`
 * is a decimal in the order's currency; all that remains when absent (the admin's refund form needs one).
 */
export async function refundFromShopAdmin(
  demo: CardLifecycleDemo & { woocommerceCredentials: { consumerKey: string; consumerSecret: string }; stripeSecretKey: string },
  orderId: number,
  amount?: string,
): Promise<AdminRefundDone> {
  const wooUrl = demo.woocommerceUrl.replace(/\/+$/, '');
  const order = (await demoGet(`${wooUrl}/demo/orders/${orderId}`)) as { currency: string; total: string; refunds: { amount: string }[] };
  const refunded = order.refunds.reduce((sum, refund) => sum + toMinorUnits(refund.amount, order.currency), 0);
  const remaining = toMinorUnits(order.total, order.currency) - refunded;
  const minor = amount === undefined ? remaining : toMinorUnits(amount, order.currency);
  const value = formatMinorUnits(minor, order.currency);
  const url = `${wooUrl}/wp-json/wc/v3/orders/${orderId}/refunds`;
  const { consumerKey, consumerSecret } = demo.woocommerceCredentials;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64')}` },
      body: JSON.stringify({ amount: value, reason: 'Refunded from the shop admin', api_refund: true }),
    });
  } catch {
    throw new DemoCallError(url, 0, undefined, `${url} did not answer`);
  }
  const answer = (await response.json().catch(() => ({}))) as { id?: number; amount?: string; message?: string; code?: string; meta_data?: { key: string; value: unknown }[] };
  if (!response.ok) {
    // WooCommerce shows the gateway's error to the shop owner and drops its refund.
    if (answer.code === 'woocommerce_rest_cannot_create_order_refund' && answer.message) throw new ShopRefundRefusedError(answer.message);
    throw new DemoCallError(url, response.status, answer.code, `${url} → HTTP ${response.status}: ${answer.message ?? 'failed'}`);
  }
  const providerRefundId = answer.meta_data?.find((m) => m.key === '_provider_refund_id')?.value;
  return {
    refundId: Number(answer.id),
    amount: String(answer.amount),
    delivery: { status: 200, body: { refund_id: providerRefundId, amount: answer.amount } },
    event: await deliverLatestChargeRefunded(demo, demo.stripeSecretKey),
  };
}

/**
 * Stripe follows a refund with `charge.refunded`; the Stripe stand-in records it but posts only payment
 * outcomes by itself, so the demo delivers it as Stripe would: the newest one, listed from the stand-in.
 */
async function deliverLatestChargeRefunded(demo: CardLifecycleDemo, stripeSecretKey: string): Promise<Delivery | undefined> {
  const url = `${demo.stripeUrl.replace(/\/+$/, '')}/v1/events?type=charge.refunded&limit=1`;
  const list = (await call(url, { headers: { Authorization: `Bearer ${stripeSecretKey}` } })) as { data?: object[] };
  const event = list.data?.[0];
  return event ? post(demo, event) : undefined;
}

export interface ReviewOpened {
  reviewId: string;
  delivery: Delivery;
}

/** Stripe Radar holds the order's card payment for review: `review.opened` is delivered. */
export async function openRadarReview(demo: CardLifecycleDemo, orderId: number): Promise<ReviewOpened> {
  const { intentId } = await cardPaymentOf(demo, orderId, 'review');
  const opened = (await demoPost(`${demo.stripeUrl.replace(/\/+$/, '')}/demo/payment_intents/${intentId}/review`, {})) as { review: { id: string }; event: object };
  return { reviewId: opened.review.id, delivery: await post(demo, opened.event) };
}

/** The shop approves the order's open review in the Stripe dashboard: `review.closed` (approved) is delivered. */
export async function approveRadarReview(demo: CardLifecycleDemo, orderId: number): Promise<ReviewOpened> {
  const order = (await demoGet(`${demo.woocommerceUrl.replace(/\/+$/, '')}/demo/orders/${orderId}`)) as { meta: Record<string, unknown> };
  const reviewId = order.meta._review_id;
  if (typeof reviewId !== 'string' || typeof order.meta._review_closed_reason === 'string' && order.meta._review_closed_reason !== '') {
    throw new NoOpenReviewError(`No open Radar review on order ${orderId}: open one first.`);
  }
  const closed = (await demoPost(`${demo.stripeUrl.replace(/\/+$/, '')}/demo/reviews/${encodeURIComponent(reviewId)}/close`, { reason: 'approved' })) as object;
  return { reviewId, delivery: await post(demo, closed) };
}

/** The order has no open Radar review to approve (nothing changed). */
export class NoOpenReviewError extends Error {}
