/**
 * A local WooCommerce REST v3 stand-in over HTTP, on loopback, backed by the
 * in-memory WooCommerceModel (WooCommerce's own write semantics), so that the
 * service's real store client (@woocommerce/woocommerce-rest-api) is what runs.
 *
 * Authentication as WooCommerce does it: over http:// the client signs every
 * request with OAuth 1.0a query parameters (HMAC-SHA256, checked here, with
 * WooCommerce's 15-minute timestamp window and single-use nonces); HTTP Basic
 * and `consumer_key`/`consumer_secret` query parameters are accepted too.
 *
 * Routes:
 *   GET               /wp-json/wc/v3/orders/<id>
 *   PUT | POST | PATCH /wp-json/wc/v3/orders/<id>
 *   GET               /wp-json/wc/v3/orders              (newest first)
 *   GET               /wp-json/wc/v3/customers/<id>
 *   DELETE            /wp-json/wc-checkout-bridge/v1/customers/<id>/cart           (companion plugin)
 *   POST              /wp-json/wc-checkout-bridge/v1/customers/<id>/cart/restore   (companion plugin)
 * Read-only demo views, without authentication:
 *   GET /demo/orders, GET /demo/orders/<id>, GET /demo/customers/<id>/cart
 *
 * Not part of the production bundle.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, listenPreferring, sendJson, type RunningServer } from './http';
import { WooCommerceModel, WooError } from './woocommerce-model';

export interface WooCredentials {
  consumerKey: string;
  consumerSecret: string;
}

export interface WooStandIn extends RunningServer {
  model: WooCommerceModel;
}

const OAUTH_WINDOW_SECONDS = 15 * 60;

function wooError(response: ServerResponse, status: number, code: string, message: string): void {
  sendJson(response, status, { code, message, data: { status } });
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

/** undefined when the request is authenticated, else the 401 error to answer. */
function authenticate(
  request: IncomingMessage,
  url: URL,
  credentials: WooCredentials,
  usedNonces: Set<string>,
): { code: string; message: string } | undefined {
  const bad = (message: string) => ({ code: 'woocommerce_rest_authentication_error', message });
  const header = request.headers.authorization;
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
    const baseUrl = `http://${request.headers.host}${url.pathname}`;
    // PHP's $_GET keeps one value per name (the last), and WooCommerce signs what $_GET holds: the REST client
    // sends request parameters twice over http (in the URL and again beside the oauth_* ones).
    const expected = oauthSignature(request.method ?? 'GET', baseUrl, [...new Map(query.entries())], credentials.consumerSecret);
    if (!sameText(expected, query.get('oauth_signature') ?? '')) {
      return bad('Invalid signature - provided signature does not match.');
    }
    const nonce = `${query.get('oauth_timestamp')}:${query.get('oauth_nonce')}`;
    if (usedNonces.has(nonce)) return bad('Invalid nonce - nonce has already been used.');
    usedNonces.add(nonce);
    return undefined;
  }
  return { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.' };
}

/** A compact view of an order for people reading the demo. */
export function orderSummary(model: WooCommerceModel, id: number) {
  const order = model.get(id);
  return {
    id: order.id,
    status: order.status,
    currency: order.currency,
    total: order.total,
    customer_id: order.customer_id,
    customer_note: order.customer_note,
    payment_method: order.payment_method,
    payment_method_title: order.payment_method_title,
    transaction_id: order.transaction_id,
    date_paid: order.date_paid,
    billing: order.billing,
    shipping: order.shipping,
    meta: Object.fromEntries(order.meta_data.map((m) => [m.key, m.value])),
  };
}

export function wooHandler(model: WooCommerceModel, credentials: WooCredentials) {
  const usedNonces = new Set<string>();

  return (request: IncomingMessage, response: ServerResponse, url: URL, body: string): void => {
    const method = request.method ?? 'GET';
    const path = url.pathname.replace(/\/+$/, '');
    const run = (action: () => unknown) => {
      try {
        sendJson(response, 200, action());
      } catch (error) {
        if (!(error instanceof WooError)) throw error;
        wooError(response, error.status, error.code, error.message);
      }
    };

    // Read-only views for people following the demo (no credentials needed, nothing written).
    let match = /^\/demo\/orders(?:\/(\d+))?$/.exec(path);
    if (match && method === 'GET') {
      const id = match[1];
      if (id) return run(() => orderSummary(model, Number(id)));
      return run(() => [...model.orders.keys()].sort((a, b) => a - b).map((orderId) => orderSummary(model, orderId)));
    }
    match = /^\/demo\/customers\/(\d+)\/cart$/.exec(path);
    if (match && method === 'GET') return run(() => ({ customer_id: Number(match?.[1]), items: model.carts.get(Number(match?.[1])) ?? [] }));

    if (!path.startsWith('/wp-json/')) return wooError(response, 404, 'rest_no_route', 'No route was found matching the URL and request method.');

    let payload: Record<string, unknown> = {};
    if (body.trim() !== '') {
      try {
        const parsed: unknown = JSON.parse(body);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
      } catch {
        return wooError(response, 400, 'rest_invalid_json', 'Invalid JSON body passed.');
      }
    }

    const route = path.slice('/wp-json'.length);
    const orderRoute = /^\/wc\/v3\/orders\/(\d+)$/.exec(route);
    const customerRoute = /^\/wc\/v3\/customers\/(\d+)$/.exec(route);
    const cartRoute = /^\/wc-checkout-bridge\/v1\/customers\/(\d+)\/cart$/.exec(route);
    const restoreRoute = /^\/wc-checkout-bridge\/v1\/customers\/(\d+)\/cart\/restore$/.exec(route);

    type Action = () => unknown;
    let action: Action | undefined;
    if (orderRoute && method === 'GET') action = () => model.get(Number(orderRoute[1]));
    else if (orderRoute && ['PUT', 'POST', 'PATCH'].includes(method)) action = () => model.update(Number(orderRoute[1]), payload);
    else if (route === '/wc/v3/orders' && method === 'GET') {
      action = () => [...model.orders.keys()].sort((a, b) => b - a).map((id) => model.get(id));
    } else if (customerRoute && method === 'GET') action = () => model.getCustomer(Number(customerRoute[1]));
    else if (cartRoute && method === 'DELETE') action = () => model.clearCart(Number(cartRoute[1]));
    else if (restoreRoute && method === 'POST') {
      action = () => model.restoreCart(Number(restoreRoute[1]), Number(payload.order_id));
    }
    if (!action) return wooError(response, 404, 'rest_no_route', 'No route was found matching the URL and request method.');

    const denied = authenticate(request, url, credentials, usedNonces);
    if (denied) return wooError(response, 401, denied.code, denied.message);
    run(action);
  };
}

/** Starts the WooCommerce stand-in on loopback (port 0: any free port; preferred: that one when free). */
export async function startWooCommerceStandIn(options: {
  model: WooCommerceModel;
  credentials: WooCredentials;
  port?: number;
  preferredPort?: number;
}): Promise<WooStandIn> {
  const handler = wooHandler(options.model, options.credentials);
  const server = options.preferredPort
    ? await listenPreferring(handler, options.preferredPort, 'woocommerce stand-in')
    : await listen(handler, options.port ?? 0, 'woocommerce stand-in');
  return { ...server, model: options.model };
}
