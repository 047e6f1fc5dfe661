/**
 * npm run send-event -- --url <deployment> --type <event type> --order <id> [--secret whsec_…] [--amount <minor units>]
 *   [--currency usd] [--intent pi_…] [--charge ch_…] [--status <refund, dispute or review outcome>] [--path /api/stripe/webhook]
 *
 * Posts a Stripe event of any type the service handles to any deployment, signed with its webhook
 * secret as Stripe signs (the SDK's generateTestHeaderString): no Stripe account or CLI needed.
 * The secret comes from --secret, else STRIPE_WEBHOOK_SECRET, else a running demo (npm run dev).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Stripe from 'stripe';
import { CARD_EVENT_TYPES } from '../lib/card-payments/apply-event';
import { readDemoState } from '../stand-ins/demo/world';

export const HANDLED_EVENT_TYPES: readonly string[] = CARD_EVENT_TYPES;

export interface TestEventOptions {
  type: string;
  orderId: number;
  /** Minor units; default 1000. */
  amount?: number;
  currency?: string;
  intentId?: string;
  chargeId?: string;
  /** A refund's status (default `failed`), a closed dispute's (default `won`), a closed review's reason (default `approved`). */
  status?: string;
  eventId?: string;
  now?: Date;
}

const testId = (prefix: string) => `${prefix}_test_${randomBytes(8).toString('hex')}`;

const INTENT_STATUS: Record<string, string> = {
  'payment_intent.succeeded': 'succeeded',
  'payment_intent.payment_failed': 'requires_payment_method',
  'payment_intent.processing': 'processing',
  'payment_intent.amount_capturable_updated': 'requires_capture',
  'payment_intent.canceled': 'canceled',
};

const DISPUTE_STATUS: Record<string, string> = {
  'charge.dispute.created': 'needs_response',
  'charge.dispute.funds_withdrawn': 'needs_response',
  'charge.dispute.funds_reinstated': 'won',
};

/** The event's `data.object`, shaped as Stripe sends it for that type, linked to the order through its payment intent. */
function eventObject(options: Required<Omit<TestEventOptions, 'status' | 'eventId' | 'now'>> & { status: string | undefined; created: number }): Record<string, unknown> {
  const { type, orderId, amount, currency, intentId, chargeId, status, created } = options;
  const metadata = { shop_order_id: String(orderId) };
  if (type.startsWith('payment_intent.')) {
    const intentStatus = INTENT_STATUS[type] ?? 'requires_payment_method';
    return {
      id: intentId,
      object: 'payment_intent',
      amount,
      amount_received: intentStatus === 'succeeded' ? amount : 0,
      amount_capturable: intentStatus === 'requires_capture' ? amount : 0,
      currency,
      status: intentStatus,
      capture_method: intentStatus === 'requires_capture' ? 'manual' : 'automatic',
      cancellation_reason: intentStatus === 'canceled' ? 'requested_by_customer' : null,
      metadata,
      latest_charge: intentStatus === 'processing' ? null : chargeId,
      payment_method_types: ['card'],
      last_payment_error:
        type === 'payment_intent.payment_failed' ? { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' } : null,
      created,
      livemode: false,
    };
  }
  // Charge-level objects carry their payment intent expanded, so the service finds the order without asking Stripe.
  const intent = { id: intentId, object: 'payment_intent', metadata };
  if (type === 'charge.refunded') {
    return { id: chargeId, object: 'charge', amount, amount_refunded: amount, currency, refunded: true, payment_intent: intent, created, livemode: false };
  }
  if (type === 'charge.refund.updated' || type === 'refund.updated') {
    return { id: testId('re'), object: 'refund', amount, currency, status: status ?? 'failed', reason: null, charge: chargeId, payment_intent: intent, metadata: {}, created };
  }
  if (type.startsWith('charge.dispute.')) {
    const disputeStatus = type === 'charge.dispute.closed' ? (status ?? 'won') : (DISPUTE_STATUS[type] ?? 'needs_response');
    return { id: testId('dp'), object: 'dispute', amount, currency, status: disputeStatus, reason: 'fraudulent', charge: chargeId, payment_intent: intent, created, livemode: false };
  }
  if (type === 'review.opened' || type === 'review.closed') {
    const open = type === 'review.opened';
    return {
      id: testId('prv'),
      object: 'review',
      open,
      opened_reason: 'rule',
      closed_reason: open ? null : (status ?? 'approved'),
      reason: open ? 'rule' : (status ?? 'approved'),
      charge: chargeId,
      payment_intent: intent,
      created,
      livemode: false,
    };
  }
  return { id: testId('issfr'), object: 'radar.early_fraud_warning', actionable: true, fraud_type: 'made_with_stolen_card', charge: chargeId, payment_intent: intent, created, livemode: false };
}

/** A test event (livemode false) of a handled type for one order. */
export function testEvent(options: TestEventOptions): Record<string, unknown> {
  if (!HANDLED_EVENT_TYPES.includes(options.type)) throw new Error(`The service handles no event of type "${options.type}": use one of ${HANDLED_EVENT_TYPES.join(', ')}`);
  const created = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const object = eventObject({
    type: options.type,
    orderId: options.orderId,
    amount: options.amount ?? 1000,
    currency: (options.currency ?? 'usd').toLowerCase(),
    intentId: options.intentId ?? testId('pi'),
    chargeId: options.chargeId ?? testId('ch'),
    status: options.status,
    created,
  });
  return {
    id: options.eventId ?? testId('evt'),
    object: 'event',
    api_version: '2025-08-27.basil',
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: options.type,
    data: { object },
  };
}

export interface SendOptions {
  url: string;
  secret: string;
  event: Record<string, unknown>;
  path?: string;
  fetch?: typeof fetch;
}

/** Posts the event, signed with the deployment's webhook secret; answers the deployment's status and body. */
export async function sendTestEvent(options: SendOptions): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(options.event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret });
  const response = await (options.fetch ?? fetch)(`${options.url.replace(/\/+$/, '')}${options.path ?? '/api/stripe/webhook'}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
    body: payload,
  });
  return { status: response.status, body: await response.text() };
}

export const USAGE = `Usage: npm run send-event -- --url <deployment> --type <event type> --order <id> [--secret whsec_…]
    [--amount <minor units, default 1000>] [--currency usd] [--intent pi_…] [--charge ch_…] [--status <outcome>] [--path /api/stripe/webhook]
Types: ${HANDLED_EVENT_TYPES.join(', ')}`;

/** The command line as send options; throws a message for the user on anything missing or malformed. */
export function parseCommandLine(argv: string[], env: Record<string, string | undefined>, demoSecret?: string): SendOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      type: { type: 'string' },
      order: { type: 'string' },
      secret: { type: 'string' },
      amount: { type: 'string' },
      currency: { type: 'string' },
      intent: { type: 'string' },
      charge: { type: 'string' },
      status: { type: 'string' },
      path: { type: 'string' },
    },
    strict: true,
  });
  if (!values.url || !/^https?:\/\/[^/]/.test(values.url)) throw new Error('--url must be the deployment’s base URL, e.g. https://checkout.example.com');
  if (!values.type) throw new Error('--type is required');
  if (!values.order || !/^[1-9]\d{0,14}$/.test(values.order)) throw new Error('--order must be a WooCommerce order id');
  if (values.amount !== undefined && !/^\d{1,12}$/.test(values.amount)) throw new Error('--amount must be a whole number of minor units (cents)');
  if (values.currency !== undefined && !/^[A-Za-z]{3}$/.test(values.currency)) throw new Error('--currency must be a 3-letter code');
  const secret = values.secret ?? env.STRIPE_WEBHOOK_SECRET ?? demoSecret;
  if (!secret) throw new Error('No webhook secret: pass --secret whsec_… (the deployment’s STRIPE_WEBHOOK_SECRET) or set STRIPE_WEBHOOK_SECRET');
  return {
    url: values.url,
    secret,
    ...(values.path ? { path: values.path } : {}),
    event: testEvent({
      type: values.type,
      orderId: Number(values.order),
      ...(values.amount ? { amount: Number(values.amount) } : {}),
      ...(values.currency ? { currency: values.currency } : {}),
      ...(values.intent ? { intentId: values.intent } : {}),
      ...(values.charge ? { chargeId: values.charge } : {}),
      ...(values.status ? { status: values.status } : {}),
    }),
  };
}

async function main(): Promise<void> {
  let options: SendOptions;
  try {
    options = parseCommandLine(process.argv.slice(2), process.env, readDemoState()?.stripeWebhookSecret);
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    process.exit(2);
  }
  const event = options.event as { id: string; type: string };
  let answer: { status: number; body: string };
  try {
    answer = await sendTestEvent(options);
  } catch {
    console.error(`${options.url} did not answer`);
    process.exit(1);
  }
  console.log(`${event.type} (${event.id}) → HTTP ${answer.status} ${answer.body.slice(0, 500)}`);
  process.exitCode = answer.status >= 200 && answer.status < 300 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
