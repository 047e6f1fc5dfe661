/**
 * The Stripe PaymentIntents stand-in as one fetch-style handler,
 * `(Request) => Promise<Response>`: routing, API-key authentication and
 * idempotency written once, mounted both by msw in the route tests
 * (tests/support/providers.ts, on https://api.stripe.com) and by the loopback
 * HTTP server (stripe-server.ts, reached through STRIPE_API_BASE_URL).
 *
 * As Stripe: form-encoded requests, `Authorization: Bearer <secret key>` (or
 * Basic with the key as user name), `Idempotency-Key` replaying the first
 * answer for the same parameters and answering 400 `idempotency_error` for
 * other parameters, and errors shaped `{error: {type, code, message, param}}`.
 *
 * Routes: POST /v1/payment_intents, GET /v1/payment_intents/<id>, POST /v1/payment_intents/<id>
 *
 * Not part of the production bundle.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FetchHandler } from './http';
import { StripeApiError, StripeModel, parseFormBody } from './stripe-model';

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
    },
  });
}

export function stripeApiHandler(model: StripeModel, secretKey: string): FetchHandler {
  return async (request) => {
    const method = request.method.toUpperCase();
    const path = new URL(request.url).pathname.replace(/\/+$/, '');

    const key = apiKeyOf(request);
    if (!key) {
      return stripeJson(401, new StripeApiError(401, 'invalid_request_error', undefined, 'You did not provide an API key.').toJSON());
    }
    if (!sameText(key, secretKey)) {
      return stripeJson(
        401,
        new StripeApiError(401, 'invalid_request_error', 'api_key_invalid', `Invalid API Key provided: ${redactKey(key)}`).toJSON(),
      );
    }

    const body = method === 'POST' ? await request.text() : '';
    const params = body ? parseFormBody(body) : {};
    const idempotencyKey = method === 'POST' ? request.headers.get('idempotency-key') : null;
    const intentRoute = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);

    try {
      if (path === '/v1/payment_intents' && method === 'POST') {
        const result = model.idempotent(idempotencyKey, `POST ${path} ${JSON.stringify(params)}`, () => model.create(params));
        return stripeJson(result.status, result.body);
      }
      if (intentRoute && method === 'GET') return stripeJson(200, model.retrieve(decodeURIComponent(intentRoute[1] ?? '')));
      if (intentRoute && method === 'POST') {
        const id = decodeURIComponent(intentRoute[1] ?? '');
        const result = model.idempotent(idempotencyKey, `POST ${path} ${JSON.stringify(params)}`, () => model.update(id, params));
        return stripeJson(result.status, result.body);
      }
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
