/**
 * The local Stripe stand-in over HTTP, on loopback: the one fetch-style
 * handler of fetch-handler.ts (the same one msw mounts in the route tests),
 * with the demo controls of demo-controls.ts in front, served by a node http server, so the real `stripe` SDK (pointed here with
 * STRIPE_API_BASE_URL) is what runs.
 *
 * Like Stripe, it delivers the signed `payment_intent.succeeded` /
 * `payment_intent.payment_failed` event of each confirmation by itself, to the
 * webhook endpoint set with `deliverEventsTo` (webhook-sender.ts), retrying a
 * few times when the endpoint does not answer 2xx.
 *
 * Routes: POST /v1/payment_intents, GET|POST /v1/payment_intents/<id>,
 * POST /v1/payment_intents/<id>/confirm, GET /v1/events (events.ts).
 *
 * Not part of the production bundle.
 */
import { listen, listenPreferring, serveFetch, type RunningServer } from '../loopback-http';
import { stripeApiWithDemoControls } from './demo-controls';
import type { StripeModel } from './model';
import { StripeWebhookSender, type WebhookAttempt, type WebhookEndpoint } from './webhook-sender';

export interface StripeStandIn extends RunningServer {
  model: StripeModel;
  /** Where this stand-in posts its events from now on, signed with the endpoint's secret. */
  deliverEventsTo(endpoint: WebhookEndpoint): void;
  /** Every webhook delivery attempt so far. */
  webhookAttempts: WebhookAttempt[];
  /** Resolves when every pending delivery has succeeded or given up. */
  webhooksIdle(): Promise<void>;
}

/** Starts the Stripe stand-in on loopback (port 0: any free port; preferred: that one when free). */
export async function startStripeStandIn(options: {
  model: StripeModel;
  secretKey: string;
  /** The publishable key a storefront page confirms with (pk_test_…). */
  publishableKey?: string;
  /** Delays before each webhook retry; its length is the number of retries. */
  webhookRetryDelaysMs?: number[];
  port?: number;
  preferredPort?: number;
}): Promise<StripeStandIn> {
  const sender = new StripeWebhookSender(options.webhookRetryDelaysMs);
  const handler = serveFetch(
    stripeApiWithDemoControls(options.model, options.secretKey, {
      publishableKey: options.publishableKey,
      onConfirmOutcome: (outcome) => sender.publish(outcome),
    }),
  );
  const server = options.preferredPort
    ? await listenPreferring(handler, options.preferredPort, 'stripe stand-in')
    : await listen(handler, options.port ?? 0, 'stripe stand-in');
  return {
    ...server,
    model: options.model,
    deliverEventsTo: (endpoint) => {
      sender.endpoint = endpoint;
    },
    webhookAttempts: sender.attempts,
    webhooksIdle: () => sender.idle(),
    close: async () => {
      sender.stop();
      await sender.idle();
      await server.close();
    },
  };
}
