/**
 * A local Stripe PaymentIntents stand-in over HTTP, on loopback, backed by the
 * in-memory StripeModel, so that the real `stripe` SDK (pointed here with
 * STRIPE_API_BASE_URL) is what runs.
 *
 * As Stripe: form-encoded requests, `Authorization: Bearer <secret key>` (or
 * Basic with the key as user name), `Idempotency-Key` replaying the first
 * answer for the same parameters and answering 400 `idempotency_error` for
 * other parameters, and errors shaped `{error: {type, code, message, param}}`.
 *
 * Routes:
 *   POST /v1/payment_intents, GET /v1/payment_intents/<id>, POST /v1/payment_intents/<id>
 *   GET /v1/events (scripts/stand-ins/stripe-events.ts)
 * Demo controls, without authentication (what a customer's card would do):
 *   GET  /demo/payment_intents[/<id>]
 *   POST /demo/payment_intents/<id>/succeed
 *   POST /demo/payment_intents/<id>/fail      optional JSON {"message": "..."}
 *
 * Not part of the production bundle.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, listenPreferring, sendJson, type RunningServer } from './http';
import { StripeApiError, StripeModel, parseFormBody } from './stripe-model';

export interface StripeStandIn extends RunningServer {
  model: StripeModel;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function apiKeyOf(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization ?? '';
  if (header.startsWith('Bearer ')) return header.slice(7).trim();
  if (header.startsWith('Basic ')) return Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0];
  return undefined;
}

function redactKey(key: string): string {
  return key.length > 12 ? `${key.slice(0, 8)}${'*'.repeat(8)}${key.slice(-4)}` : '***';
}

export function stripeHandler(model: StripeModel, secretKey: string) {
  return (request: IncomingMessage, response: ServerResponse, url: URL, body: string): void => {
    const method = request.method ?? 'GET';
    const path = url.pathname.replace(/\/+$/, '');
    const headers = { 'Request-Id': `req_${randomBytes(7).toString('hex')}`, 'Stripe-Version': '2025-01-01' };
    const answer = (status: number, payload: unknown) => sendJson(response, status, payload, headers);
    const fail = (error: unknown) => {
      if (!(error instanceof StripeApiError)) throw error;
      answer(error.status, error.toJSON());
    };

    // Demo controls: stand in for the customer's browser completing (or failing) the payment with Stripe.js.
    const demo = /^\/demo\/payment_intents(?:\/([A-Za-z0-9_]+))?(?:\/(succeed|fail))?$/.exec(path);
    if (demo) {
      const [, id, action] = demo;
      try {
        if (method === 'GET' && !action) {
          return answer(200, id ? model.retrieve(id) : [...model.intents.values()]);
        }
        if (method === 'POST' && id && action === 'succeed') return answer(200, model.succeed(id));
        if (method === 'POST' && id && action === 'fail') {
          let message: string | undefined;
          try {
            message = (JSON.parse(body || '{}') as { message?: string }).message;
          } catch {
            message = undefined;
          }
          return answer(200, model.fail(id, message));
        }
      } catch (error) {
        return fail(error);
      }
    }

    const key = apiKeyOf(request);
    if (!key) {
      return answer(401, new StripeApiError(401, 'invalid_request_error', undefined, 'You did not provide an API key.').toJSON());
    }
    if (!sameText(key, secretKey)) {
      return answer(
        401,
        new StripeApiError(401, 'invalid_request_error', 'api_key_invalid', `Invalid API Key provided: ${redactKey(key)}`).toJSON(),
      );
    }

    const params = (request.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')
      ? parseFormBody(body)
      : method === 'POST' && body
        ? parseFormBody(body)
        : {};
    const idempotencyKey = method === 'POST' ? ((request.headers['idempotency-key'] as string | undefined) ?? null) : null;
    const intentRoute = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);

    try {
      if (path === '/v1/events' && method === 'GET') {
        const result = model.events.list(url.searchParams);
        return answer(result.status, result.body);
      }
      if (path === '/v1/payment_intents' && method === 'POST') {
        const result = model.idempotent(idempotencyKey, `POST ${path} ${JSON.stringify(params)}`, () => model.create(params));
        return answer(result.status, result.body);
      }
      if (intentRoute && method === 'GET') return answer(200, model.retrieve(decodeURIComponent(intentRoute[1] ?? '')));
      if (intentRoute && method === 'POST') {
        const id = decodeURIComponent(intentRoute[1] ?? '');
        const result = model.idempotent(idempotencyKey, `POST ${path} ${JSON.stringify(params)}`, () => model.update(id, params));
        return answer(result.status, result.body);
      }
    } catch (error) {
      return fail(error);
    }
    answer(
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

/** Starts the Stripe stand-in on loopback (port 0: any free port; preferred: that one when free). */
export async function startStripeStandIn(options: {
  model: StripeModel;
  secretKey: string;
  port?: number;
  preferredPort?: number;
}): Promise<StripeStandIn> {
  const handler = stripeHandler(options.model, options.secretKey);
  const server = options.preferredPort
    ? await listenPreferring(handler, options.preferredPort, 'stripe stand-in')
    : await listen(handler, options.port ?? 0, 'stripe stand-in');
  return { ...server, model: options.model };
}
