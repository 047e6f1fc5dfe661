/**
 * The local Stripe stand-in over HTTP, on loopback: the one fetch-style
 * handler of stripe-handler.ts (the same one msw mounts in the route tests)
 * served by a node http server, so the real `stripe` SDK (pointed here with
 * STRIPE_API_BASE_URL) is what runs.
 *
 * Like Stripe, it delivers the signed `payment_intent.succeeded` /
 * `payment_intent.payment_failed` event of each confirmation by itself, to the
 * webhook endpoint set with `deliverEventsTo` (stripe-webhooks.ts), retrying a
 * few times when the endpoint does not answer 2xx.
 *
 * Routes: POST /v1/payment_intents, GET|POST /v1/payment_intents/<id>,
 * POST /v1/payment_intents/<id>/confirm, GET /v1/events (stripe-events.ts).
 *
 * Demo controls on top, without authentication (what a customer's card would
 * do, without an event: `npm run demo:pay` delivers its own):
 *   GET  /demo/payment_intents[/<id>]
 *   POST /demo/payment_intents/<id>/succeed
 *   POST /demo/payment_intents/<id>/fail      optional JSON {"message": "..."}
 *   POST /demo/payment_intents/<id>/refund    optional JSON {"amount": minor units}; answers the event
 *   POST /demo/payment_intents/<id>/dispute   answers {dispute, event}
 *   POST /demo/disputes/<id>/close            JSON {"status": "won"|"lost"}; answers the event
 *   POST /demo/payment_intents/<id>/review    Radar opens a review; answers {review, event}
 *   POST /demo/reviews/<id>/close             JSON {"reason": "approved"|"refunded"|…}; answers the event
 *   POST /demo/payment_intents/<id>/fraud_warning  answers {warning, event}
 *
 * Not part of the production bundle.
 */
import { listen, listenPreferring, serveFetch, type FetchHandler, type RunningServer } from '../loopback-http';
import { stripeApiHandler, stripeJson, type StripeHandlerOptions } from './fetch-handler';
import { StripeModel } from './model';
import { StripeApiError } from './objects';
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

/** The Stripe handler plus the demo controls. */
export function stripeHandler(model: StripeModel, secretKey: string, options: StripeHandlerOptions = {}): FetchHandler {
  const api = stripeApiHandler(model, secretKey, options);
  return async (request) => {
    const method = request.method.toUpperCase();
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    // Demo controls: stand in for the customer's browser completing (or failing) the payment with Stripe.js.
    const demo = /^\/demo\/payment_intents(?:\/([A-Za-z0-9_]+))?(?:\/(succeed|fail|refund|dispute|review|fraud_warning))?$/.exec(path);
    const closeReview = /^\/demo\/reviews\/([A-Za-z0-9_]+)\/close$/.exec(path);
    const closeDispute = /^\/demo\/disputes\/([A-Za-z0-9_]+)\/close$/.exec(path);
    const jsonBody = async (): Promise<Record<string, unknown>> => {
      try {
        return (JSON.parse((await request.text()) || '{}') as Record<string, unknown>) ?? {};
      } catch {
        return {};
      }
    };
    if (closeDispute && method === 'POST') {
      try {
        const status = (await jsonBody()).status === 'lost' ? 'lost' : 'won';
        return stripeJson(200, model.closeDispute(closeDispute[1] ?? '', status));
      } catch (error) {
        if (!(error instanceof StripeApiError)) throw error;
        return stripeJson(error.status, error.toJSON());
      }
    }
    if (closeReview && method === 'POST') {
      try {
        const reason = (await jsonBody()).reason;
        return stripeJson(200, model.closeReview(closeReview[1] ?? '', typeof reason === 'string' && /^[a-z_]{1,40}$/.test(reason) ? reason : 'approved'));
      } catch (error) {
        if (!(error instanceof StripeApiError)) throw error;
        return stripeJson(error.status, error.toJSON());
      }
    }
    if (demo) {
      const [, id, action] = demo;
      try {
        if (method === 'GET' && !action) return stripeJson(200, id ? model.retrieve(id) : [...model.intents.values()]);
        if (method === 'POST' && id && action === 'succeed') return stripeJson(200, model.succeed(id));
        if (method === 'POST' && id && action === 'refund') {
          const amount = (await jsonBody()).amount;
          return stripeJson(200, model.refund(id, typeof amount === 'number' ? amount : undefined).event);
        }
        if (method === 'POST' && id && action === 'dispute') return stripeJson(200, model.dispute(id));
        if (method === 'POST' && id && action === 'review') return stripeJson(200, model.openReview(id));
        if (method === 'POST' && id && action === 'fraud_warning') return stripeJson(200, model.earlyFraudWarning(id));
        if (method === 'POST' && id && action === 'fail') {
          let message: string | undefined;
          try {
            message = (JSON.parse((await request.text()) || '{}') as { message?: string }).message;
          } catch {
            message = undefined;
          }
          return stripeJson(200, model.fail(id, message));
        }
      } catch (error) {
        if (!(error instanceof StripeApiError)) throw error;
        return stripeJson(error.status, error.toJSON());
      }
    }
    return api(request);
  };
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
    stripeHandler(options.model, options.secretKey, {
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
