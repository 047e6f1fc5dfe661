/**
 * What the bench sends: each flow is one endpoint driven as the storefront,
 * Stripe or ShipStation drives it, on orders seeded fresh for it in the
 * stand-ins, so every measured request does the flow's full work (a new
 * intent really is new, a payment really finds a pending order).
 *
 * A flow prepares all its requests first (seeding, tokens, signatures, and
 * for the "reused" and "duplicate" flows the first call that they repeat),
 * so that the measured loop sends nothing but the measured requests.
 */
import { randomBytes } from 'node:crypto';
import { mintCheckoutToken } from '@/lib/security/checkout-token';
import { DEMO_SECRETS } from '@/stand-ins/demo/world';
import { cardEvent, shipNotification, signCardEvent, type CardEventType } from '@/stand-ins/webhook-deliveries';
import type { StripeIntent } from '@/stand-ins/stripe/objects';
import { BENCH_ORDER_TOTAL_CENTS } from './contract';

export const STOREFRONT_ORIGIN = 'https://storefront.bench.test';
/** A path no route serves: Next.js answers 404, its own floor for a request. Nothing is added to app/. */
export const TRIVIAL_PATH = '/api/bench-no-such-route';

export interface BenchRequest {
  method: 'GET' | 'POST' | 'OPTIONS';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Control {
  seed(count: number, options?: { status?: string; registered?: boolean }): Promise<number[]>;
  setLatency(ms: number): Promise<void>;
  setStatusRegistered(status: string, registered: boolean): Promise<void>;
  orderStatus(id: number): Promise<string>;
}

export interface FlowContext {
  control: Control;
  /** Sends one request to the service (used to prepare the "reused" and "duplicate" flows). */
  send(request: BenchRequest): Promise<number>;
}

export interface Flow {
  name: string;
  route: string;
  /** The status every measured request must get; anything else fails the run. */
  status: number;
  prepare(count: number, context: FlowContext): Promise<BenchRequest[]>;
  /** After the run, the order status the flow must have left (checked on the first and last order). */
  leaves?: { status: string; ids: number[] };
  /** Runs once before the flow (e.g. remove the `shipped` status from the store). */
  before?(context: FlowContext): Promise<void>;
  after?(context: FlowContext): Promise<void>;
}

/** Runs `work` between the flow's `before` and `after`, `after` even when `work` fails. */
export async function aroundFlow<T>(flow: Flow, context: FlowContext, work: () => Promise<T>): Promise<T> {
  await flow.before?.(context);
  try {
    return await work();
  } finally {
    await flow.after?.(context);
  }
}

let clientCounter = 0;
/**
 * A client address never used before in this run, from the IPv6 documentation
 * range (only ever written into X-Forwarded-For): each request has its own
 * rate-limit bucket, and a run can use as many as it likes. The counter sits in
 * the /64 prefix, since the service keys an IPv6 client by its /64
 * (lib/http/client-ip.ts): addresses inside one /64 are one client.
 */
export function nextClientIp(): string {
  clientCounter += 1;
  return `2001:db8:${Math.floor(clientCounter / 65536).toString(16)}:${(clientCounter % 65536).toString(16)}::1`;
}

const jsonHeaders = () => ({ 'content-type': 'application/json', 'x-forwarded-for': nextClientIp() });
const checkoutHeaders = () => ({ ...jsonHeaders(), origin: STOREFRONT_ORIGIN });

const ADDRESS = {
  first_name: 'Grace',
  last_name: 'Hopper',
  address_1: '1 Harbor Way',
  city: 'Arlington',
  state: 'VA',
  postcode: '22201',
  country: 'US',
};

export async function checkoutBody(orderId: number, withAddresses: boolean): Promise<string> {
  const token = await mintCheckoutToken(orderId, { secret: DEMO_SECRETS.checkoutTokenSecret, ttl: '30m' });
  return JSON.stringify(
    withAddresses
      ? { token, billing_address: ADDRESS, shipping_address: ADDRESS, contact_info: { email: 'grace@example.com', phone: '+1 555 0100' } }
      : { token },
  );
}

export const checkoutRequest = (path: string, body: string): BenchRequest => ({ method: 'POST', path, headers: checkoutHeaders(), body });

/** A payment intent as Stripe sends it in an event, for an order of the bench's usual total. */
export function intentFor(orderId: number, outcome: 'succeeded' | 'failed'): StripeIntent {
  const id = `pi_bench_${randomBytes(8).toString('hex')}`;
  return {
    id,
    object: 'payment_intent',
    amount: BENCH_ORDER_TOTAL_CENTS,
    currency: 'usd',
    status: outcome === 'succeeded' ? 'succeeded' : 'requires_payment_method',
    client_secret: `${id}_secret_bench`,
    metadata: { shop_order_id: String(orderId) },
    latest_charge: outcome === 'succeeded' ? `ch_bench_${randomBytes(8).toString('hex')}` : null,
    last_payment_error: outcome === 'failed' ? { message: 'Your card was declined.', code: 'card_declined' } : null,
  } as unknown as StripeIntent;
}

export function cardRequest(type: CardEventType, intent: StripeIntent, eventId?: string): BenchRequest {
  const { payload, signature } = signCardEvent(cardEvent(type, intent, eventId), DEMO_SECRETS.stripeWebhookSecret);
  return { method: 'POST', path: '/api/cardprovider/webhook', headers: { ...jsonHeaders(), 'stripe-signature': signature }, body: payload };
}

export function shippingRequest(orderId: number): BenchRequest {
  return {
    method: 'POST',
    path: '/api/shipping/webhook',
    headers: { ...jsonHeaders(), 'x-webhook-secret': DEMO_SECRETS.shippingWebhookSecret },
    body: JSON.stringify(shipNotification({ orderId })),
  };
}

/** A fresh copy of a prepared request with a new client address (the same call, from a "new" client). */
const again = (request: BenchRequest): BenchRequest => ({ ...request, headers: { ...request.headers, 'x-forwarded-for': nextClientIp() } });

async function expectStatus(context: FlowContext, request: BenchRequest, status: number): Promise<void> {
  const got = await context.send(request);
  if (got !== status) throw new Error(`preparing ${request.path}: expected ${status}, got ${got}`);
}

export const trivialFlow: Flow = {
  name: 'trivial 404',
  route: TRIVIAL_PATH,
  status: 404,
  prepare: async (count) =>
    Array.from({ length: count }, () => ({ method: 'GET' as const, path: TRIVIAL_PATH, headers: { 'x-forwarded-for': nextClientIp() } })),
};

/**
 * The cheapest request a route handler of the service answers: the storefront's
 * CORS preflight (204 from the checkout route wrapper, no body, no upstream).
 * What Next.js costs to reach a route handler and send its answer; the floor
 * under every flow, beside the 404.
 */
export const preflightFlow: Flow = {
  name: 'route handler floor: CORS preflight',
  route: '/api/payment-intent',
  status: 204,
  prepare: async (count) =>
    Array.from({ length: count }, () => ({
      method: 'OPTIONS' as const,
      path: '/api/payment-intent',
      headers: { origin: STOREFRONT_ORIGIN, 'access-control-request-method': 'POST', 'x-forwarded-for': nextClientIp() },
    })),
};

function paymentIntentFlow(name: string, options: { reused: boolean; withAddresses: boolean }): Flow {
  const flow: Flow = {
    name,
    route: '/api/payment-intent',
    status: 200,
    prepare: async (count, context) => {
      const ids = await context.control.seed(count);
      flow.leaves = { status: 'pending', ids };
      const requests: BenchRequest[] = [];
      for (const id of ids) {
        const request = checkoutRequest('/api/payment-intent', await checkoutBody(id, options.withAddresses));
        if (options.reused) await expectStatus(context, request, 200);
        requests.push(options.reused ? again(request) : request);
      }
      return requests;
    },
  };
  return flow;
}

function cardFlow(name: string, options: { outcome: 'succeeded' | 'failed'; registered?: boolean; duplicate?: boolean }): Flow {
  const flow: Flow = {
    name,
    route: '/api/cardprovider/webhook',
    status: 200,
    prepare: async (count, context) => {
      const ids = await context.control.seed(count, { registered: options.registered === true });
      flow.leaves = { status: options.outcome === 'succeeded' ? 'processing' : 'pending', ids };
      const type: CardEventType = options.outcome === 'succeeded' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed';
      const requests: BenchRequest[] = [];
      for (const id of ids) {
        const intent = intentFor(id, options.outcome);
        const eventId = `evt_bench_${randomBytes(10).toString('hex')}`;
        const request = cardRequest(type, intent, eventId);
        if (options.duplicate) await expectStatus(context, request, 200);
        requests.push(options.duplicate ? cardRequest(type, intent, eventId) : request);
      }
      return requests;
    },
  };
  return flow;
}

function shippingFlow(name: string, options: { shippedStatusMissing: boolean }): Flow {
  const flow: Flow = {
    name,
    route: '/api/shipping/webhook',
    status: 200,
    prepare: async (count, context) => {
      const ids = await context.control.seed(count, { status: 'processing' });
      flow.leaves = { status: options.shippedStatusMissing ? 'completed' : 'shipped', ids };
      return ids.map(shippingRequest);
    },
  };
  if (options.shippedStatusMissing) {
    // The store lacks `shipped` (docs/decisions.md#d9): the service falls back to `completed` and then
    // remembers the refusal for a while, so this flow runs last among the shipping ones.
    flow.before = (context) => context.control.setStatusRegistered('shipped', false);
    flow.after = (context) => context.control.setStatusRegistered('shipped', true);
  }
  return flow;
}

/** Every measured flow, in the order they run (the `completed` fallback last: the service remembers it). */
export function benchFlows(): Flow[] {
  return [
    paymentIntentFlow('payment-intent, new intent, with addresses', { reused: false, withAddresses: true }),
    paymentIntentFlow('payment-intent, new intent, no addresses', { reused: false, withAddresses: false }),
    paymentIntentFlow('payment-intent, reused intent, with addresses', { reused: true, withAddresses: true }),
    paymentIntentFlow('payment-intent, reused intent, no addresses', { reused: true, withAddresses: false }),
    {
      name: 'submit-order',
      route: '/api/submit-order',
      status: 200,
      prepare: async (count, context) => {
        const ids = await context.control.seed(count);
        return Promise.all(ids.map(async (id) => checkoutRequest('/api/submit-order', await checkoutBody(id, true))));
      },
    },
    cardFlow('card success, guest', { outcome: 'succeeded' }),
    cardFlow('card success, registered (cart cleared)', { outcome: 'succeeded', registered: true }),
    cardFlow('card failure, guest', { outcome: 'failed' }),
    cardFlow('card success, duplicate delivery', { outcome: 'succeeded', duplicate: true }),
    shippingFlow('shipping', { shippedStatusMissing: false }),
    shippingFlow('shipping, `completed` fallback', { shippedStatusMissing: true }),
  ];
}

/** The memory check's request: runs the card webhook's rate limiter for a new client, then a cheap 400 (no signature). */
export function memoryProbe(): BenchRequest {
  return { method: 'POST', path: '/api/cardprovider/webhook', headers: jsonHeaders(), body: '{}' };
}
