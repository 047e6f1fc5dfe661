/**
 * The Stripe stand-in's demo controls, in front of its API: what a customer's
 * card, or Stripe's dashboard, would do to a payment intent, without
 * authentication. The loopback server (loopback-server.ts) serves them; msw in
 * the route tests mounts the API alone (fetch-handler.ts).
 *
 * Routes (succeed and fail change the intent without an event, as a
 * customer's card would; `npm run demo:pay` delivers its own):
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
import type { FetchHandler } from '../loopback-http';
import { stripeApiHandler, stripeJson, type StripeHandlerOptions } from './fetch-handler';
import type { StripeModel } from './model';
import { StripeApiError } from './objects';

/** Stripe's API (fetch-handler.ts) with the demo controls in front of it. */
export function stripeApiWithDemoControls(model: StripeModel, secretKey: string, options: StripeHandlerOptions = {}): FetchHandler {
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
