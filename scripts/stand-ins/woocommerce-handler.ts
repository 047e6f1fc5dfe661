/**
 * The WooCommerce stand-in as one fetch-style handler, `(Request) => Promise<Response>`:
 * routing, authentication and error shapes written once, mounted both by msw
 * in the route tests (tests/support/providers.ts) and by the loopback HTTP
 * server (woocommerce-server.ts), so a fidelity fix is made in one place.
 *
 * Authentication as WooCommerce's WC_REST_Authentication does it: HTTP Basic
 * with the consumer key and secret (what the client uses over https://),
 * `consumer_key`/`consumer_secret` query parameters, or OAuth 1.0a query
 * parameters (what the client signs with over http://: HMAC-SHA256, a
 * 15-minute timestamp window, single-use nonces).
 *
 * Routes:
 *   GET                /wp-json/wc/v3/orders/<id>
 *   PUT | POST | PATCH /wp-json/wc/v3/orders/<id>
 *   GET                /wp-json/wc/v3/orders              (newest first)
 *   GET | POST         /wp-json/wc/v3/orders/<id>/refunds
 *   DELETE             /wp-json/wc/v3/orders/<id>/refunds/<refund_id>?force=true
 *   GET | POST         /wp-json/wc/v3/orders/<id>/notes
 *   GET                /wp-json/wc/v3/customers/<id>
 *   DELETE             /wp-json/wc-checkout-bridge/v1/customers/<id>/cart           (companion plugin)
 *   POST               /wp-json/wc-checkout-bridge/v1/customers/<id>/cart/restore   (companion plugin)
 *
 * Not part of the production bundle.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FetchHandler } from './http';
import { WooCommerceModel, WooError } from './woocommerce-model';

export interface WooCredentials {
  consumerKey: string;
  consumerSecret: string;
}

const OAUTH_WINDOW_SECONDS = 15 * 60;
const NO_ROUTE = new WooError(404, 'rest_no_route', 'No route was found matching the URL and request method.');

export function wooJson(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=UTF-8' } });
}

function errorResponse(error: WooError): Response {
  return wooJson(error.status, error.toJSON());
}

/** RFC 3986 encoding, as OAuth 1.0a (and the oauth-1.0a client library) uses it. */
function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The OAuth 1.0a signature WooCommerce computes (class-wc-rest-authentication.php, check_oauth_signature). */
export function oauthSignature(method: string, baseUrl: string, params: [string, string][], consumerSecret: string): string {
  const normalized = params
    .filter(([key]) => key !== 'oauth_signature')
    .map(([key, value]) => [percentEncode(key), percentEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const base = `${method.toUpperCase()}&${percentEncode(baseUrl)}&${percentEncode(normalized)}`;
  return createHmac('sha256', `${percentEncode(consumerSecret)}&`).update(base).digest('base64');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** undefined when the request is authenticated, else the 401 to answer. */
function authenticate(request: Request, url: URL, credentials: WooCredentials, usedNonces: Set<string>): WooError | undefined {
  const bad = (message: string) => new WooError(401, 'woocommerce_rest_authentication_error', message);
  const header = request.headers.get('authorization');
  if (header?.startsWith('Basic ')) {
    const [key = '', ...rest] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
    if (!sameText(key, credentials.consumerKey)) return bad('Consumer key is invalid.');
    if (!sameText(rest.join(':'), credentials.consumerSecret)) return bad('Consumer secret is invalid.');
    return undefined;
  }
  const query = url.searchParams;
  if (query.has('consumer_key')) {
    if (!sameText(query.get('consumer_key') ?? '', credentials.consumerKey)) return bad('Consumer key is invalid.');
    if (!sameText(query.get('consumer_secret') ?? '', credentials.consumerSecret)) return bad('Consumer secret is invalid.');
    return undefined;
  }
  if (query.has('oauth_consumer_key')) {
    if (!sameText(query.get('oauth_consumer_key') ?? '', credentials.consumerKey)) return bad('Consumer key is invalid.');
    for (const required of ['oauth_signature', 'oauth_signature_method', 'oauth_nonce', 'oauth_timestamp']) {
      if (!query.get(required)) return bad(`${required} parameter is missing.`);
    }
    if (query.get('oauth_signature_method') !== 'HMAC-SHA256' && query.get('oauth_signature_method') !== 'HMAC-SHA1') {
      return bad('Invalid signature method.');
    }
    const timestamp = Number(query.get('oauth_timestamp'));
    if (!Number.isFinite(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > OAUTH_WINDOW_SECONDS) {
      return bad('Invalid timestamp.');
    }
    // PHP's $_GET keeps one value per name (the last), and WooCommerce signs what $_GET holds: the REST client
    // sends request parameters twice over http (in the URL and again beside the oauth_* ones).
    const signed: [string, string][] = [...new Map(query.entries())];
    const expected = oauthSignature(request.method, `${url.origin}${url.pathname}`, signed, credentials.consumerSecret);
    if (!sameText(expected, query.get('oauth_signature') ?? '')) {
      return bad('Invalid signature - provided signature does not match.');
    }
    const nonce = `${query.get('oauth_timestamp')}:${query.get('oauth_nonce')}`;
    if (usedNonces.has(nonce)) return bad('Invalid nonce - nonce has already been used.');
    usedNonces.add(nonce);
    return undefined;
  }
  return new WooError(401, 'woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
}

async function readPayload(request: Request): Promise<Record<string, unknown> | WooError> {
  const text = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return new WooError(400, 'rest_invalid_json', 'Invalid JSON body passed.');
  }
}

/** The plugin's `order_id` argument: a required integer of at least 1, as register_rest_route validates it. */
function orderIdArgument(payload: Record<string, unknown>): number {
  const value = payload.order_id;
  if (value === undefined) {
    throw new WooError(400, 'rest_missing_callback_param', 'Missing parameter(s): order_id', { params: ['order_id'] });
  }
  const id = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 1) {
    throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): order_id', { params: { order_id: 'order_id must be greater than or equal to 1' } });
  }
  return id;
}

/** WooCommerce (REST v3 plus the companion plugin) over the model, as one fetch handler. */
export function wooCommerceHandler(model: WooCommerceModel, credentials: WooCredentials): FetchHandler {
  const usedNonces = new Set<string>();

  return async (request) => {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const path = url.pathname.replace(/\/+$/, '');
    if (!path.startsWith('/wp-json/')) return errorResponse(NO_ROUTE);
    const route = path.slice('/wp-json'.length);

    const orderRoute = /^\/wc\/v3\/orders\/(\d+)$/.exec(route);
    const customerRoute = /^\/wc\/v3\/customers\/(\d+)$/.exec(route);
    const refundsRoute = /^\/wc\/v3\/orders\/(\d+)\/refunds$/.exec(route);
    const refundRoute = /^\/wc\/v3\/orders\/(\d+)\/refunds\/(\d+)$/.exec(route);
    const notesRoute = /^\/wc\/v3\/orders\/(\d+)\/notes$/.exec(route);
    const cartRoute = /^\/wc-checkout-bridge\/v1\/customers\/(\d+)\/cart$/.exec(route);
    const restoreRoute = /^\/wc-checkout-bridge\/v1\/customers\/(\d+)\/cart\/restore$/.exec(route);
    const idOf = (match: RegExpExecArray) => Number(match[1]);

    let action: ((payload: Record<string, unknown>) => unknown) | undefined;
    if (orderRoute && method === 'GET') action = () => model.get(idOf(orderRoute));
    else if (orderRoute && ['PUT', 'POST', 'PATCH'].includes(method)) action = (payload) => model.update(idOf(orderRoute), payload);
    else if (route === '/wc/v3/orders' && method === 'GET') {
      action = () => [...model.orders.keys()].sort((a, b) => b - a).map((id) => model.get(id));
    } else if (refundsRoute && method === 'GET') action = () => model.listRefunds(idOf(refundsRoute));
    else if (refundsRoute && method === 'POST') {
      action = (payload) =>
        payload.api_refund !== false && model.gateway ? model.createRefundViaGateway(idOf(refundsRoute), payload) : model.createRefund(idOf(refundsRoute), payload);
    }
    else if (refundRoute && method === 'DELETE') {
      const force = ['true', '1'].includes(url.searchParams.get('force') ?? '');
      action = () => model.deleteRefund(idOf(refundRoute), Number(refundRoute[2]), force);
    } else if (notesRoute && method === 'GET') action = () => model.listNotes(idOf(notesRoute));
    else if (notesRoute && method === 'POST') action = (payload) => model.addNote(idOf(notesRoute), payload);
    else if (customerRoute && method === 'GET') action = () => model.getCustomer(idOf(customerRoute));
    else if (cartRoute && method === 'DELETE') action = () => model.clearCart(idOf(cartRoute));
    else if (restoreRoute && method === 'POST') action = (payload) => model.restoreCart(idOf(restoreRoute), orderIdArgument(payload));
    if (!action) return errorResponse(NO_ROUTE);

    // WordPress answers an unknown route before authenticating, and a malformed body before running the route.
    const denied = authenticate(request, url, credentials, usedNonces);
    if (denied) return errorResponse(denied);
    const payload = await readPayload(request);
    if (payload instanceof WooError) return errorResponse(payload);
    // WordPress answers a created resource with 201.
    const created = method === 'POST' && Boolean(refundsRoute ?? notesRoute);
    try {
      // Awaited: a refund through the companion plugin's gateway answers once the service has.
      return wooJson(created ? 201 : 200, await action(payload));
    } catch (error) {
      if (error instanceof WooError) return errorResponse(error);
      throw error;
    }
  };
}
