/**
 * The companion plugin's payment gateway, as the WooCommerce stand-in runs it
 * when a refund asks for the money back (`api_refund`, the admin's "Refund via
 * Credit Card"): what wordpress/checkout-cart-bridge/includes/
 * class-checkout-cart-bridge-gateway.php does in process_refund. It signs
 * `{order_id, refund_id, amount, reason}` with the shared secret, POSTs it to
 * the service's /api/store/refunds, retries once when the answer is lost (a
 * network failure or a 5xx: the service refunds a WooCommerce refund once),
 * and answers the Stripe refund id to keep on the WooCommerce refund, or the
 * service's error for WooCommerce to show (and drop its refund).
 *
 * `send` is how the request reaches the service: the route handler itself in
 * the route tests, fetch to a running service otherwise. Not part of the
 * production bundle.
 */
import { signStoreCallback } from '../../lib/security/store-signature';

export type GatewayRefundResult = { ok: true; meta: Record<string, string> } | { ok: false; error: string };

export interface StoreGateway {
  /** The payment method id it is registered under (the service's CARD_PAYMENT_METHOD_ID). */
  id: string;
  processRefund(orderId: number, refundId: number, amount: string, reason: string): Promise<GatewayRefundResult>;
}

export interface CompanionGatewayOptions {
  secret: string;
  send: (request: Request) => Promise<Response>;
  id?: string;
  serviceUrl?: string;
}

const ATTEMPTS = 2;

export function companionGateway(options: CompanionGatewayOptions): StoreGateway {
  const url = `${(options.serviceUrl ?? 'http://localhost:3000').replace(/\/+$/, '')}/api/store/refunds`;
  return {
    id: options.id ?? 'cardprovider',
    async processRefund(orderId, refundId, amount, reason) {
      const body = JSON.stringify({ order_id: orderId, refund_id: refundId, amount, reason });
      let lastError = 'The checkout service could not be reached.';
      for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
        let response: Response;
        try {
          // Signed again on each attempt: the signature's time is part of what is checked.
          response = await options.send(
            new Request(url, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-store-signature': signStoreCallback({ method: 'POST', path: url, rawBody: body }, options.secret) },
              body,
            }),
          );
        } catch {
          continue;
        }
        const answer = (await response.json().catch(() => ({}))) as { refund_id?: unknown; error?: unknown };
        if (response.ok && typeof answer.refund_id === 'string') return { ok: true, meta: { _provider_refund_id: answer.refund_id } };
        lastError = typeof answer.error === 'string' ? answer.error : `The checkout service answered HTTP ${response.status}.`;
        if (response.status < 500) break;
      }
      return { ok: false, error: lastError };
    },
  };
}
