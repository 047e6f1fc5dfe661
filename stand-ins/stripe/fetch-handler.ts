/**
 * The Stripe PaymentIntents stand-in as one fetch-style handler,
 * `(Request) => Promise<Response>`: routing, API-key authentication and
 * idempotency written once, mounted both by msw in the route tests
 * (tests/support/providers.ts, on https://api.stripe.com) and by the loopback
 * HTTP server (loopback-server.ts, reached through STRIPE_API_BASE_URL).
 *
 * As Stripe: form-encoded requests, `Authorization: Bearer <secret key>` (or
 * Basic with the key as user name), `Idempotency-Key` replaying the first
 * answer for the same parameters, answering 400 `idempotency_error` for
 * other parameters and 409 while the first is still executing, and errors shaped `{error: {type, code, message, param}}`.
 *
 * Routes: POST /v1/payment_intents, GET /v1/payment_intents/<id>, POST /v1/payment_intents/<id>,
 * POST /v1/payment_intents/<id>/confirm, POST /v1/payment_intents/<id>/capture | cancel,
 * GET | POST /v1/refunds, POST /v1/refunds/<id> (metadata), GET /v1/events, GET /v1/charges, GET /v1/charges/<id>, GET /v1/reviews/<id>,
 * GET | POST /v1/webhook_endpoints, GET | POST | DELETE /v1/webhook_endpoints/<id>,
 * GET | POST /v1/payment_method_domains[/<id>[/validate]] (payment-method-domains.ts);
 * customers, customer sessions and saved payment methods (customers.ts).
 *
 * The browser side, as Stripe.js calls it: with the publishable key in the
 * form body (`key=pk_…`, or the query string of a GET) instead of an
 * Authorization header, a publishable-key call may only confirm or read a
 * payment intent and must carry that intent's `client_secret` (or ask for the Payment Element's saved
 * cards, GET /v1/elements/sessions, with it and a customer session's). Answers carry
 * `Access-Control-Allow-Origin: *`, as api.stripe.com's do, so a storefront
 * page on any origin can read them.
 *
 * Not part of the production bundle.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FetchHandler } from '../loopback-http';
import { customerRoute } from './customers';
import { StripeModel, parseFormBody, type ConfirmOutcome } from './model';
import { StripeApiError } from './objects';
import { paymentMethodDomainsRoute } from './payment-method-domains';

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function apiKeyOf(request: Request): string | undefined {
  const header = request.headers.get('authorization') ?? '';
  if (header.startsWith('Bearer ')) return header.slice(7).trim();
  if (header.startsWith('Basic ')) return Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0];
  return undefined;
}

function redactKey(key: string): string {
  return key.length > 12 ? `${key.slice(0, 8)}${'*'.repeat(8)}${key.slice(-4)}` : '***';
}

/** A JSON answer with the headers Stripe sends on every response. */
export function stripeJson(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'Content-Type': 'application/json',
      'Request-Id': `req_${randomBytes(7).toString('hex')}`,
      'Stripe-Version': '2025-01-01',
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'Request-Id, Stripe-Version',
    },
  });
}

export interface StripeHandlerOptions {
  /** The publishable key (pk_test_…) the storefront page uses; without it, publishable-key calls are refused. */
  publishableKey?: string;
  /** Told what each confirmation did, so the events can be delivered (webhook-sender.ts). */
  onConfirmOutcome?: (outcome: ConfirmOutcome) => void;
}

const unauthorized = (message: string, code?: string) => stripeJson(401, new StripeApiError(401, 'invalid_request_error', code, message).toJSON());

export function stripeApiHandler(model: StripeModel, secretKey: string, options: StripeHandlerOptions = {}): FetchHandler {
  return async (request) => {
    const method = request.method.toUpperCase();
    const url = new URL(request.url);
    const path = url.pathname.replace(/\/+$/, '');
    const intentRoute = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    const confirmRoute = /^\/v1\/payment_intents\/([^/]+)\/confirm$/.exec(path);
    const captureRoute = /^\/v1\/payment_intents\/([^/]+)\/(capture|cancel)$/.exec(path);
    const refundRoute = /^\/v1\/refunds\/([^/]+)$/.exec(path);

    if (method === 'OPTIONS') {
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': 'GET, POST, HEAD, OPTIONS, DELETE',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, Idempotency-Key, Stripe-Version',
          'Access-Control-Max-Age': '300',
        },
      });
    }

    const body = method === 'POST' ? await request.text() : '';
    const params = body ? parseFormBody(body) : {};
    const publishable = typeof params.key === 'string' ? params.key : url.searchParams.get('key');
    if (publishable !== null && !apiKeyOf(request)) {
      const intentId = decodeURIComponent((confirmRoute ?? intentRoute)?.[1] ?? '');
      if (!options.publishableKey || !sameText(publishable, options.publishableKey)) {
        return unauthorized(`Invalid API Key provided: ${redactKey(publishable)}`, 'api_key_invalid');
      }
      const readsIntent = Boolean(intentRoute) && method === 'GET';
      if (path === '/v1/elements/sessions' && method === 'GET') {
        const secret = url.searchParams.get('client_secret') ?? '';
        const id = secret.split('_secret_')[0] ?? '';
        if (!model.clientSecretMatches(id, secret)) return stripeJson(400, new StripeApiError(400, 'invalid_request_error', 'parameter_invalid_string', 'Invalid client_secret.', 'client_secret').toJSON());
        try {
          return stripeJson(200, model.customers.elementsSession(model.retrieve(id), url.searchParams.get('customer_session_client_secret')));
        } catch (error) {
          if (!(error instanceof StripeApiError)) throw error;
          return stripeJson(error.status, error.toJSON());
        }
      }
      if (!(confirmRoute && method === 'POST') && !readsIntent) {
        return unauthorized('This API call cannot be made with a publishable API key. Please use a secret API key.');
      }
      const clientSecret = readsIntent ? url.searchParams.get('client_secret') : params.client_secret;
      try {
        if (!model.clientSecretMatches(intentId, clientSecret)) {
          model.retrieve(intentId);
          throw new StripeApiError(
            400,
            'invalid_request_error',
            'payment_intent_invalid_parameter',
            'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
            'client_secret',
          );
        }
        if (readsIntent) return stripeJson(200, model.retrieve(intentId));
        return stripeJson(200, model.confirm(intentId, params, options.onConfirmOutcome));
      } catch (error) {
        if (!(error instanceof StripeApiError)) throw error;
        return stripeJson(error.status, error.toJSON());
      }
    }

    const key = apiKeyOf(request);
    if (!key) return unauthorized('You did not provide an API key.');
    if (!sameText(key, secretKey)) return unauthorized(`Invalid API Key provided: ${redactKey(key)}`, 'api_key_invalid');

    const idempotencyKey = method === 'POST' ? request.headers.get('idempotency-key') : null;

    try {
      const customerAnswer = await customerRoute(model.customers, { method, path, params }, (run) =>
        model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, run),
      );
      if (customerAnswer) return stripeJson(customerAnswer.status, customerAnswer.body);
      if (path === '/v1/events' && method === 'GET') {
        const result = model.events.list(url.searchParams);
        return stripeJson(result.status, result.body);
      }
      if (path === '/v1/refunds' && method === 'GET') return stripeJson(200, model.listRefunds(url.searchParams));
      const endpointRoute = /^\/v1\/webhook_endpoints(?:\/([^/]+))?$/.exec(path);
      if (endpointRoute) {
        const endpoints = model.webhookEndpoints;
        const id = endpointRoute[1] === undefined ? undefined : decodeURIComponent(endpointRoute[1]);
        if (id === undefined && method === 'GET') return stripeJson(200, endpoints.list(url.searchParams));
        if (id === undefined && method === 'POST') return stripeJson(200, endpoints.create(params));
        if (id !== undefined && method === 'GET') return stripeJson(200, endpoints.retrieve(id));
        if (id !== undefined && method === 'POST') return stripeJson(200, endpoints.update(id, params));
        if (id !== undefined && method === 'DELETE') return stripeJson(200, endpoints.delete(id));
      }
      if (path === '/v1/charges' && method === 'GET') return stripeJson(200, model.listCharges(url.searchParams));
      const objectRoute = /^\/v1\/(charges|reviews)\/([^/]+)$/.exec(path);
      if (objectRoute && method === 'GET') {
        const id = decodeURIComponent(objectRoute[2] ?? '');
        const expand = [...url.searchParams.entries()].filter(([key]) => /^expand\[\d*\]$/.test(key)).map(([, value]) => value);
        return stripeJson(200, objectRoute[1] === 'charges' ? model.retrieveCharge(id, expand) : model.retrieveReview(id));
      }
      if (path === '/v1/refunds' && method === 'POST') {
        const result = await model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, () => model.createRefund(params));
        return stripeJson(result.status, result.body);
      }
      if (refundRoute && method === 'POST') {
        const id = decodeURIComponent(refundRoute[1] ?? '');
        const result = await model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, () => model.updateRefundMetadata(id, params));
        return stripeJson(result.status, result.body);
      }
      if (captureRoute && method === 'POST') {
        const id = decodeURIComponent(captureRoute[1] ?? '');
        const act = captureRoute[2] === 'capture' ? () => model.capture(id, params, options.onConfirmOutcome) : () => model.cancel(id, params);
        const result = await model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, act);
        return stripeJson(result.status, result.body);
      }
      if (path === '/v1/payment_intents' && method === 'POST') {
        const result = await model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, () => model.create(params));
        return stripeJson(result.status, result.body);
      }
      if (intentRoute && method === 'GET') return stripeJson(200, model.retrieve(decodeURIComponent(intentRoute[1] ?? '')));
      if (intentRoute && method === 'POST') {
        const id = decodeURIComponent(intentRoute[1] ?? '');
        const result = await model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, () => model.update(id, params));
        return stripeJson(result.status, result.body);
      }
      if (confirmRoute && method === 'POST') {
        const id = decodeURIComponent(confirmRoute[1] ?? '');
        const result = await model.idempotent(idempotencyKey, path, `POST ${path} ${JSON.stringify(params)}`, () =>
          model.confirm(id, params, options.onConfirmOutcome),
        );
        return stripeJson(result.status, result.body);
      }
      const domains = paymentMethodDomainsRoute(model, method, path, url.searchParams, params);
      if (domains) return stripeJson(domains.status, domains.body);
    } catch (error) {
      if (!(error instanceof StripeApiError)) throw error;
      return stripeJson(error.status, error.toJSON());
    }
    return stripeJson(
      404,
      new StripeApiError(
        404,
        'invalid_request_error',
        undefined,
        `Unrecognized request URL (${method}: ${path}). This local stand-in serves only the PaymentIntents API.`,
      ).toJSON(),
    );
  };
}
