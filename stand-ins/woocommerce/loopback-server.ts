/**
 * The local WooCommerce stand-in over HTTP, on loopback: the one fetch-style
 * handler of fetch-handler.ts (the same one msw mounts in the route
 * tests), with the read-only demo views of demo-views.ts beside it, served by
 * a node http server, so the service's real store client
 * (@woocommerce/woocommerce-rest-api, signing with OAuth 1.0a over http://)
 * is what runs against it.
 *
 * Not part of the production bundle.
 */
import { listen, listenPreferring, serveFetch, type RunningServer } from '../loopback-http';
import { wooCommerceApiWithDemoViews } from './demo-views';
import type { WooCredentials } from './fetch-handler';
import type { WooCommerceModel } from './model';

export interface WooStandIn extends RunningServer {
  model: WooCommerceModel;
}

/** Starts the WooCommerce stand-in on loopback (port 0: any free port; preferred: that one when free). */
export async function startWooCommerceStandIn(options: {
  model: WooCommerceModel;
  credentials: WooCredentials;
  port?: number;
  preferredPort?: number;
}): Promise<WooStandIn> {
  const handler = serveFetch(wooCommerceApiWithDemoViews(options.model, options.credentials));
  const server = options.preferredPort
    ? await listenPreferring(handler, options.preferredPort, 'woocommerce stand-in')
    : await listen(handler, options.port ?? 0, 'woocommerce stand-in');
  return { ...server, model: options.model };
}
