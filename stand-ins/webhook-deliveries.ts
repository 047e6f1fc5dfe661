/**
 * Deliveries as Stripe and ShipStation make them: a signed Stripe event
 * carrying a payment intent, and a ShipStation-style shipment notification.
 * Used by `npm run demo:pay` / `demo:ship` and by the end-to-end tests.
 * Not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { StripeIntent } from './stripe/objects';

export type CardEventType = 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'payment_intent.amount_capturable_updated';

export interface Delivery {
  status: number;
  body: unknown;
}

async function answer(response: Response): Promise<Delivery> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body };
}

/** A Stripe event envelope around a payment intent, as Stripe posts it. */
export function cardEvent(type: CardEventType, intent: StripeIntent, id = `evt_${randomBytes(12).toString('hex')}`) {
  return {
    id,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object: intent },
  };
}

/** The raw body and its `Stripe-Signature` header, signed as Stripe signs (t=…,v1=HMAC-SHA256). */
export function signCardEvent(event: object, secret: string): { payload: string; signature: string } {
  const payload = JSON.stringify(event);
  return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}

/** Posts a signed card event to the service's Stripe webhook route. */
export async function deliverCardEvent(
  serviceUrl: string,
  event: object,
  secret: string,
  path = '/api/stripe/webhook',
): Promise<Delivery> {
  const { payload, signature } = signCardEvent(event, secret);
  const response = await fetch(`${serviceUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
    body: payload,
  });
  return answer(response);
}

export interface ShipNotice {
  orderId: number;
  trackingNumber?: string;
  carrier?: string;
  shipDate?: string;
}

export function shipNotification(notice: ShipNotice) {
  return {
    resource_type: 'SHIP_NOTIFY',
    order_number: String(notice.orderId),
    tracking_number: notice.trackingNumber ?? `1Z${randomBytes(8).toString('hex').toUpperCase()}`,
    carrier: notice.carrier ?? 'UPS',
    ship_date: notice.shipDate ?? new Date().toISOString().slice(0, 10),
  };
}

/** Posts a shipment notification to the service's shipping webhook route. */
export async function deliverShipNotification(
  serviceUrl: string,
  payload: object,
  secret: string | undefined,
  path = '/api/shipping/webhook',
): Promise<Delivery> {
  const response = await fetch(`${serviceUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(secret ? { 'x-webhook-secret': secret } : {}) },
    body: JSON.stringify(payload),
  });
  return answer(response);
}
