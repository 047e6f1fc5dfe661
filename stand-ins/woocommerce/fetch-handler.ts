/**
 * The WooCommerce stand-in as one fetch-style handler, `(Request) => Promise<Response>`:
 * routing, authentication and error shapes written once, mounted both by msw
 * in the route tests (tests/support/providers.ts) and by the loopback HTTP
 * server (loopback-server.ts), so a fidelity fix is made in one place.
 *
 * Authentication as WooCommerce's WC_REST_Authentication does it: HTTP Basic
 * with the consumer key and secret (what the client uses over https://),
 * `consumer_key`/`consumer_secret` query parameters, or OAuth 1.0a query
 * parameters (what the client signs with over http://: HMAC-SHA256 over the
 * Site Address, `homeUrl`, not the address the request came to; a 15-minute
 * timestamp window, single-use nonces).
 *
 * Routes:
 *   GET                /wp-json/wc/v3/orders/<id>
 *   PUT | POST | PATCH /wp-json/wc/v3/orders/<id>
 *   GET                /wp-json/wc/v3/orders              (newest first; page, per_page)
 *   GET | POST         /wp-json/wc/v3/orders/<id>/refunds (newest first; page, per_page)
 *   GET | DELETE       /wp-json/wc/v3/orders/<id>/refunds/<refund_id>   (force defaults to true)
 *   GET | POST         /wp-json/wc/v3/orders/<id>/notes   (type: any, customer, internal)
 *   GET | PUT | POST   /wp-json/wc/v3/customers/<id>      (meta_data: customers.ts)
 *   GET                /wp-json/wc/v3/products               (catalog.ts)
 *   POST               /wp-json/wc/v3/orders                 (catalog.ts: priced from the products)
 *   DELETE             /wp-json/wc-checkout-bridge/v1/customers/<id>/cart           (companion plugin)
 *   POST               /wp-json/wc-checkout-bridge/v1/customers/<id>/cart/restore   (companion plugin; optional restore_key)
 *   POST               /wp-json/wc-checkout-bridge/v1/orders/<id>/shipment-packages (companion plugin)
 *   GET                /wp-json/wc-checkout-bridge/v1/orders/<id>/shipping-rates    (companion plugin; shipping-zones.ts)
 *
 * Every answer honours `_fields` as WordPress's rest_filter_response_fields does; lists carry
 * X-WP-Total and X-WP-TotalPages; orders, refunds and notes carry `_links` (hrefs only).
 *
 * Not part of the production bundle.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FetchHandler } from '../loopback-http';
import { presentCustomer, updateCustomer } from './customers';
import { WooCommerceModel, WooError, type WooNote, type WooOrder, type WooRefund } from './model';
import { hasLoneSurrogate, invalidParams } from './rest-validation';
import { createOrder, listProducts } from './catalog';
import { shippingRatesRoute } from './shipping-zones';

export interface WooCredentials {
  consumerKey: string;
  consumerSecret: string;
  /** WordPress's Site Address (the `home` option), which OAuth signatures cover; unset: the address the request came to. */
  homeUrl?: string;
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

/**
 * The URL WooCommerce signs over (check_oauth_signature): the home URL with the request's own scheme (is_ssl()),
 * then the request's path less the home's own path when it starts with it: never the host the request came to.
 */
export function signatureBaseUrl(homeUrl: string, requestUrl: URL): string {
  const home = homeUrl.replace(/\/+$/, '');
  const homePath = `${home.replace(/^\w+:\/\/[^/]*/, '')}/`;
  const path = requestUrl.pathname.startsWith(homePath) ? requestUrl.pathname.slice(homePath.length) : requestUrl.pathname;
  const base = home.replace(/^\w+:\/\//, `${requestUrl.protocol}//`);
  return path ? `${base}/${path.replace(/^\/+/, '')}` : base;
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
    const baseUrl = signatureBaseUrl(credentials.homeUrl ?? url.origin, url);
    const expected = oauthSignature(request.method, baseUrl, signed, credentials.consumerSecret);
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

/** WP_REST_Request::parse_json_params: PHP's json_decode refuses malformed JSON and a lone UTF-16 surrogate escape. */
async function readPayload(request: Request): Promise<Record<string, unknown> | WooError> {
  const text = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
  if (text.trim() === '') return {};
  const invalid = (jsonErrorCode: number, jsonErrorMessage: string) =>
    new WooError(400, 'rest_invalid_json', 'Invalid JSON body passed.', { json_error_code: jsonErrorCode, json_error_message: jsonErrorMessage });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return invalid(4, 'Syntax error');
  }
  if (hasLoneSurrogate(parsed)) return invalid(10, 'Single unpaired UTF-16 surrogate in unicode escape');
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/** WC_REST_CRUD_Controller::get_collection_params: `page` and `per_page`, validated as WordPress validates query arguments. */
function pageArguments(query: URLSearchParams): { page: number; perPage: number } {
  const params: Record<string, unknown> = {};
  for (const key of ['page', 'per_page']) if (query.has(key)) params[key] = query.get(key);
  const failure = invalidParams(params, {
    page: { type: 'integer', minimum: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100 },
  });
  if (failure) throw new WooError(400, 'rest_invalid_param', failure.message, { params: failure.params, details: failure.details });
  return { page: Number(params.page ?? 1), perPage: Number(params.per_page ?? 10) };
}

/** The DELETE route's `force` argument: a boolean, true unless given (refunds cannot be trashed). */
function forceArgument(query: URLSearchParams): boolean {
  if (!query.has('force')) return true;
  const value = query.get('force') ?? '';
  const failure = invalidParams({ force: value }, { force: { type: 'boolean' } });
  if (failure) throw new WooError(400, 'rest_invalid_param', failure.message, { params: failure.params, details: failure.details });
  return ['true', '1'].includes(value.toLowerCase());
}

type Json = Record<string, unknown>;

/** rest_filter_response_fields(): `_fields=a,b.c` keeps those keys (nested with dots), in an object or in each item of a list. */
function filterFields(data: unknown, fieldsParam: string | null): unknown {
  if (fieldsParam === null) return data;
  const fields = fieldsParam
    .split(/[\s,]+/)
    .map((field) => field.trim())
    .filter((field) => field !== '');
  if (fields.length === 0) return data;
  const keyed: Json = {};
  for (const field of fields) {
    const parts = field.split('.');
    let ref = keyed;
    let covered = false;
    while (parts.length > 1) {
      const next = parts.shift()!;
      // A property already included whole keeps all of its sub-properties.
      if (ref[next] === true) {
        covered = true;
        break;
      }
      ref[next] = typeof ref[next] === 'object' ? ref[next] : {};
      ref = ref[next] as Json;
    }
    if (!covered) ref[parts[0]!] = true;
  }
  // _rest_array_intersect_key_recursive(): a list has numeric keys, so a nested field never matches inside one.
  const intersect = (value: unknown, keep: Json): unknown => {
    if (Array.isArray(value)) return [];
    const out: Json = {};
    for (const [key, child] of Object.entries(value as Json)) {
      if (!(key in keep)) continue;
      out[key] = keep[key] !== true && typeof child === 'object' && child !== null ? intersect(child, keep[key] as Json) : child;
    }
    return out;
  };
  return Array.isArray(data) ? data.map((item) => intersect(item, keyed)) : intersect(data, keyed);
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

/** What a route answers: a body, its status, and the collection headers WordPress adds to a list. */
interface Answer {
  body: unknown;
  status?: number;
  total?: { items: number; perPage: number };
}

/**
 * What rest_url() and WC_Order::get_checkout_payment_url() add to an order in a response: the
 * payment URL, and `_links` (self, collection, and the customer when there is one).
 */
function presentOrder(order: WooOrder, origin: string): Json {
  const { id, order_key: key, customer_id: customerId } = order;
  const links: Json = {
    self: [{ href: `${origin}/wp-json/wc/v3/orders/${id}` }],
    collection: [{ href: `${origin}/wp-json/wc/v3/orders` }],
  };
  if (customerId !== 0) links.customer = [{ href: `${origin}/wp-json/wc/v3/customers/${customerId}` }];
  return { ...order, payment_url: `${origin}/checkout/order-pay/${id}/?pay_for_order=true&key=${key}`, _links: links };
}

function presentChild(item: WooRefund | WooNote, origin: string, orderId: number, part: 'refunds' | 'notes'): Json {
  const base = `${origin}/wp-json/wc/v3/orders/${orderId}`;
  return {
    ...item,
    _links: {
      self: [{ href: `${base}/${part}/${item.id}` }],
      collection: [{ href: `${base}/${part}` }],
      up: [{ href: base }],
    },
  };
}

/** The plugin's optional `restore_key` argument: a string of 1 to 255 of `A-Za-z0-9_.:-`, as its schema's pattern checks. */
function restoreKeyArgument(payload: Record<string, unknown>): string | undefined {
  const value = payload.restore_key;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.:-]{1,255}$/.test(value)) {
    throw new WooError(400, 'rest_invalid_param', 'Invalid parameter(s): restore_key', {
      params: { restore_key: 'restore_key does not match pattern ^[A-Za-z0-9_.:-]{1,255}$.' },
    });
  }
  return value;
}

/** WooCommerce (REST v3 plus the companion plugin) over the model, as one fetch handler. */
export function wooCommerceApiHandler(model: WooCommerceModel, credentials: WooCredentials): FetchHandler {
  const usedNonces = new Set<string>();

  return async (request) => {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const path = url.pathname.replace(/\/+$/, '');
    if (!path.startsWith('/wp-json/')) return errorResponse(NO_ROUTE);
    const route = path.slice('/wp-json'.length);
    const query = url.searchParams;
    const origin = url.origin;

    const orderRoute = /^\/wc\/v3\/orders\/(\d+)$/.exec(route);
    const customerRoute = /^\/wc\/v3\/customers\/(\d+)$/.exec(route);
    const refundsRoute = /^\/wc\/v3\/orders\/(\d+)\/refunds$/.exec(route);
    const refundRoute = /^\/wc\/v3\/orders\/(\d+)\/refunds\/(\d+)$/.exec(route);
    const notesRoute = /^\/wc\/v3\/orders\/(\d+)\/notes$/.exec(route);
    const cartRoute = /^\/wc-checkout-bridge\/v1\/customers\/(\d+)\/cart$/.exec(route);
    const restoreRoute = /^\/wc-checkout-bridge\/v1\/customers\/(\d+)\/cart\/restore$/.exec(route);
    const packagesRoute = /^\/wc-checkout-bridge\/v1\/orders\/(\d+)\/shipment-packages$/.exec(route);
    const shippingRatesMatch = /^\/wc-checkout-bridge\/v1\/orders\/(\d+)\/shipping-rates$/.exec(route);
    const idOf = (match: RegExpExecArray) => Number(match[1]);

    let action: ((payload: Record<string, unknown>) => Answer | Promise<Answer>) | undefined;
    if (orderRoute && method === 'GET') action = () => ({ body: presentOrder(model.get(idOf(orderRoute)), origin) });
    else if (orderRoute && ['PUT', 'POST', 'PATCH'].includes(method)) {
      action = (payload) => ({ body: presentOrder(model.update(idOf(orderRoute), payload), origin) });
    } else if (route === '/wc/v3/orders' && method === 'GET') {
      action = () => {
        const { page, perPage } = pageArguments(query);
        const list = model.listOrders(page, perPage);
        return { body: list.items.map((order) => presentOrder(order, origin)), total: { items: list.total, perPage } };
      };
    } else if (route === '/wc/v3/orders' && method === 'POST') {
      action = (payload) => ({ body: presentOrder(createOrder(model, payload), origin), status: 201 });
    } else if (route === '/wc/v3/products' && method === 'GET') {
      action = () => ({ body: listProducts() });
    } else if (refundsRoute && method === 'GET') {
      action = () => {
        const { page, perPage } = pageArguments(query);
        const id = idOf(refundsRoute);
        const list = model.listRefunds(id, page, perPage);
        return { body: list.items.map((refund) => presentChild(refund, origin, id, 'refunds')), total: { items: list.total, perPage } };
      };
    } else if (refundsRoute && method === 'POST') {
      action = async (payload) => {
        const id = idOf(refundsRoute);
        const viaGateway = payload.api_refund !== false && model.gateway !== undefined;
        const refund = viaGateway ? await model.createRefundViaGateway(id, payload) : model.createRefund(id, payload);
        return { body: presentChild(refund, origin, id, 'refunds'), status: 201 };
      };
    } else if (refundRoute && method === 'GET') {
      action = () => ({ body: presentChild(model.getRefund(idOf(refundRoute), Number(refundRoute[2])), origin, idOf(refundRoute), 'refunds') });
    } else if (refundRoute && method === 'DELETE') {
      action = () => ({
        body: presentChild(model.deleteRefund(idOf(refundRoute), Number(refundRoute[2]), forceArgument(query)), origin, idOf(refundRoute), 'refunds'),
      });
    } else if (notesRoute && method === 'GET') {
      action = () => ({
        body: model.listNotes(idOf(notesRoute), query.get('type') ?? 'any').map((note) => presentChild(note, origin, idOf(notesRoute), 'notes')),
      });
    } else if (notesRoute && method === 'POST') {
      action = (payload) => ({ body: presentChild(model.addNote(idOf(notesRoute), payload), origin, idOf(notesRoute), 'notes'), status: 201 });
    } else if (customerRoute && method === 'GET') action = () => ({ body: presentCustomer(model, idOf(customerRoute)) });
    else if (customerRoute && ['PUT', 'POST', 'PATCH'].includes(method)) action = (payload) => ({ body: updateCustomer(model, idOf(customerRoute), payload) });
    else if (cartRoute && method === 'DELETE') action = () => ({ body: model.clearCart(idOf(cartRoute)) });
    else if (restoreRoute && method === 'POST') {
      action = (payload) => ({ body: model.restoreCart(idOf(restoreRoute), orderIdArgument(payload), restoreKeyArgument(payload)) });
    }
    else if (packagesRoute && method === 'POST') action = (payload) => ({ body: model.mergeShipmentPackage(idOf(packagesRoute), payload) });
    else if (shippingRatesMatch && method === 'GET') action = () => ({ body: shippingRatesRoute(model, idOf(shippingRatesMatch), query) });
    if (!action) return errorResponse(NO_ROUTE);

    // WordPress answers an unknown route before authenticating, and a malformed body before running the route.
    const denied = authenticate(request, url, credentials, usedNonces);
    if (denied) return errorResponse(denied);
    const payload = await readPayload(request);
    if (payload instanceof WooError) return errorResponse(payload);
    let answer: Answer;
    try {
      // Awaited: a refund through the companion plugin's gateway answers once the service has.
      answer = await action(payload);
    } catch (error) {
      if (error instanceof WooError) return errorResponse(error);
      throw error;
    }
    // rest_filter_response_fields runs on the response data; a single item's `_links` are added after it.
    const single = !Array.isArray(answer.body) && typeof answer.body === 'object' && answer.body !== null && '_links' in answer.body;
    let body: unknown = answer.body;
    if (single) {
      const { _links: links, ...data } = answer.body as Json;
      body = query.has('_fields') ? { ...(filterFields(data, query.get('_fields')) as Json), _links: links } : answer.body;
    } else {
      body = filterFields(answer.body, query.get('_fields'));
    }
    const response = wooJson(answer.status ?? 200, body);
    if (answer.total) {
      response.headers.set('X-WP-Total', String(answer.total.items));
      response.headers.set('X-WP-TotalPages', String(Math.ceil(answer.total.items / answer.total.perPage)));
    }
    return response;
  };
}
