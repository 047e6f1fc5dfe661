/**
 * The local WooCommerce stand-in over HTTP, on loopback: the one fetch-style
 * handler of woocommerce-handler.ts (the same one msw mounts in the route
 * tests) served by a node http server, so the service's real store client
 * (@woocommerce/woocommerce-rest-api, signing with OAuth 1.0a over http://)
 * is what runs against it.
 *
 * Read-only demo views on top, without authentication:
 *   GET /demo/orders, GET /demo/orders/<id>, GET /demo/customers/<id>/cart
 *
 * Not part of the production bundle.
 */
import { listen, listenPreferring, serveFetch, type FetchHandler, type RunningServer } from './http';
import { oauthSignature, wooCommerceHandler, wooJson, type WooCredentials } from './woocommerce-handler';
import { WooCommerceModel, WooError } from './woocommerce-model';

export { oauthSignature, type WooCredentials };

export interface WooStandIn extends RunningServer {
  model: WooCommerceModel;
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

/** The WooCommerce handler plus the read-only demo views. */
export function wooHandler(model: WooCommerceModel, credentials: WooCredentials): FetchHandler {
  const api = wooCommerceHandler(model, credentials);
  return async (request) => {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    const view = (read: () => unknown) => {
      try {
        return wooJson(200, read());
      } catch (error) {
        if (error instanceof WooError) return wooJson(error.status, error.toJSON());
        throw error;
      }
    };
    if (request.method === 'GET') {
      const order = /^\/demo\/orders(?:\/(\d+))?$/.exec(path);
      if (order) {
        const id = order[1];
        if (id) return view(() => orderSummary(model, Number(id)));
        return view(() => [...model.orders.keys()].sort((a, b) => a - b).map((orderId) => orderSummary(model, orderId)));
      }
      const cart = /^\/demo\/customers\/(\d+)\/cart$/.exec(path);
      if (cart) return view(() => ({ customer_id: Number(cart[1]), items: model.carts.get(Number(cart[1])) ?? [] }));
    }
    return api(request);
  };
}

/** Starts the WooCommerce stand-in on loopback (port 0: any free port; preferred: that one when free). */
export async function startWooCommerceStandIn(options: {
  model: WooCommerceModel;
  credentials: WooCredentials;
  port?: number;
  preferredPort?: number;
}): Promise<WooStandIn> {
  const handler = serveFetch(wooHandler(options.model, options.credentials));
  const server = options.preferredPort
    ? await listenPreferring(handler, options.preferredPort, 'woocommerce stand-in')
    : await listen(handler, options.port ?? 0, 'woocommerce stand-in');
  return { ...server, model: options.model };
}
