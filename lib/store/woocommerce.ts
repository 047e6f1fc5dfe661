/**
 * The store client: WooCommerce REST v3 and the companion plugin's routes, within the request's deadline
 * (docs/decisions.md#d34) and the store's slots (docs/decisions.md#d33). Failures keep only status and code:
 * the library's errors carry the consumer keys and the body.
 */
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import { StoreError, StoreSignatureRefusedError, UpstreamHttpError, type StoreFailure } from '@/lib/errors';
import type { StoreSettings } from '@/lib/config';
import { z } from 'zod';
import {
  storeCustomerSchema,
  storeOrderSchema,
  storeRefundSchema,
  storeShippingQuoteSchema,
  shipmentPackageMergedSchema,
  type OrderUpdate,
  type ShippingDestination,
  type StoreShippingQuote,
  type RefundRecord,
  type ShipmentPackageMerge,
  type ShipmentPackageMerged,
  type StoreCustomer,
  type StoreOrder,
  type StoreRefund,
} from '@/lib/store/types';
import { log } from '@/lib/log';
import { traceCall } from '@/lib/telemetry';
import type { StoreGate } from '@/lib/shared-state/store-gate';
import { attemptTimeoutMs, settleWithin, withOneRetry } from '@/lib/upstream/budget';
import { nodeHttpAdapter, type AdapterRequest } from '@/lib/upstream/node-http';

const CART_BRIDGE_NAMESPACE = 'wc-checkout-bridge/v1';
const SITE_URL_WRONG = "WOOCOMMERCE_SITE_URL must be the store's Site Address (WordPress Settings → General), or WOOCOMMERCE_CONSUMER_SECRET is wrong";
const SITE_URL_UNSET =
  "set WOOCOMMERCE_SITE_URL to the store's Site Address (WordPress Settings → General) when WOOCOMMERCE_URL is another address, or check WOOCOMMERCE_CONSUMER_SECRET";

function classify(errorCode: unknown, status: number | undefined, code: string | undefined): StoreFailure {
  if (errorCode === 'ECONNABORTED' || errorCode === 'ETIMEDOUT' || errorCode === 'ERR_CANCELED') return 'timeout';
  if (status === undefined || status >= 500) return 'unavailable';
  if (status === 404) return 'not_found';
  // WooCommerce answers 400 rest_shop_order_invalid_id / woocommerce_rest_shop_order_invalid_id for a missing order.
  if (code?.endsWith('_invalid_id')) return 'not_found';
  if (code === 'rest_invalid_param') return 'invalid_param';
  return 'rejected';
}

function toStoreError(operation: string, error: unknown, siteUrlSet: boolean): StoreError {
  const e = error as { code?: unknown; response?: { status?: unknown; data?: { code?: unknown; message?: unknown } } } | undefined;
  const status = typeof e?.response?.status === 'number' ? e.response.status : undefined;
  const data = e?.response?.data;
  const code = typeof data?.code === 'string' ? data.code.slice(0, 100) : undefined;
  // WooCommerce's answer to an OAuth signature it computed otherwise (class-wc-rest-authentication.php, check_oauth_signature):
  // only the code and the English message tell it from a stale timestamp or a wrong key.
  const signatureRefused =
    status === 401 &&
    code === 'woocommerce_rest_authentication_error' &&
    typeof data?.message === 'string' &&
    data.message.startsWith('Invalid signature - provided signature does not match');
  if (signatureRefused) {
    const hint = `the store refused the OAuth signature: ${siteUrlSet ? SITE_URL_WRONG : SITE_URL_UNSET}`;
    log.error('store.signature_refused', { operation, hint });
    return new StoreSignatureRefusedError(operation, hint);
  }
  return new StoreError(operation, classify(e?.code, status, code), status, code);
}

/** Over http:// the library signs the URL it is given: the Site Address, sent on to WOOCOMMERCE_URL. */
function transportFor(settings: StoreSettings): { adapter: typeof nodeHttpAdapter; signedUrl: string } {
  if (!settings.siteUrl || /^https:/i.test(settings.url)) return { adapter: nodeHttpAdapter, signedUrl: settings.url };
  // WooCommerce signs with the request's own scheme (is_ssl()) and the Site Address's host, port and path.
  const signedUrl = settings.siteUrl.replace(/^\w+:\/\//, 'http://');
  const adapter = async (request: AdapterRequest) => {
    const url = request.url ?? '';
    if (!url.startsWith(`${signedUrl}/`)) throw new UpstreamHttpError('store request outside the site URL', 'ERR_BAD_OPTION_VALUE');
    return nodeHttpAdapter({ ...request, url: `${settings.url}/${url.slice(signedUrl.length + 1)}` });
  };
  return { adapter, signedUrl };
}

const parseNotes = (data: unknown) => z.array(z.looseObject({ note: z.string() })).parse(data).map((entry) => entry.note);
// WooCommerce answers the note it stored: anything else is no proof it was.
const parseNoteAdded = (data: unknown) => void z.looseObject({ id: z.number().int().positive() }).parse(data);

// The companion plugin's answers: anything else is no proof the cart was cleared or restored.
const cartCleared = z.looseObject({ cleared: z.literal(true) });
const cartRestored = z
  .looseObject({ restored: z.literal(true), items: z.unknown().optional() })
  .transform(({ items }) => (typeof items === 'number' ? items : 0));

/** What the use cases call: the client's public methods, so a test double needs no private field. */
export type Store = Pick<WooCommerceStore, keyof WooCommerceStore>;

export class WooCommerceStore {
  private readonly api: WooCommerceRestApi;
  private readonly bridge: WooCommerceRestApi;
  private readonly siteUrlSet: boolean;

  /**
   * Both clients are configured once: the adapter cuts each attempt's `timeoutMs` to what the request has left
   * and never follows a redirect, so the consumer keys cannot travel to another host.
   */
  constructor(
    settings: StoreSettings,
    private readonly timeoutMs: number,
    private readonly gate?: StoreGate,
  ) {
    const { adapter, signedUrl } = transportFor(settings);
    this.siteUrlSet = settings.siteUrl !== undefined;
    const options = {
      url: signedUrl,
      consumerKey: settings.consumerKey,
      consumerSecret: settings.consumerSecret,
      timeout: timeoutMs,
      axiosConfig: { maxRedirects: 0, adapter },
    };
    this.api = new WooCommerceRestApi({ ...options, version: 'wc/v3' });
    this.bridge = new WooCommerceRestApi({ ...options, version: CART_BRIDGE_NAMESPACE as 'wc/v3' });
  }

  /** A write is never repeated: WooCommerce may have applied it before the answer was lost. */
  private async call<T>(
    operation: string,
    kind: 'read' | 'write' | 'probe',
    request: () => Promise<{ data: unknown }>,
    parse: (data: unknown) => T,
  ): Promise<T> {
    const timedOut = () => new StoreError(operation, 'timeout', undefined, undefined);
    const data = await withOneRetry(
      async (allowedMs) => {
        const slot = await this.gate?.enter(operation, allowedMs);
        const timeoutMs = slot ? Math.min(allowedMs, attemptTimeoutMs(allowedMs)) : allowedMs;
        if (timeoutMs === 0) {
          slot?.leave(false);
          throw timedOut();
        }
        let sentAndTimedOut = false;
        try {
          // The adapter ends the attempt at its timeout; the race keeps the bound whatever runs under it.
          return (await traceCall('store', operation, () => settleWithin(request(), timeoutMs, timedOut))).data;
        } catch (error) {
          const storeError = error instanceof StoreError ? error : toStoreError(operation, error, this.siteUrlSet);
          sentAndTimedOut = storeError.failure === 'timeout';
          throw storeError;
        } finally {
          slot?.leave(sentAndTimedOut);
        }
      },
      {
        perAttemptMs: this.timeoutMs,
        retriable: (error) =>
          kind === 'read' && error instanceof StoreError && (error.failure === 'timeout' || error.failure === 'unavailable'),
        outOfTime: timedOut,
      },
    );
    try {
      return parse(data);
    } catch {
      throw new StoreError(operation, 'bad_response', 200, undefined);
    }
  }

  getOrder(orderId: number): Promise<StoreOrder> {
    return this.call('get order', 'read', () => this.api.get(`orders/${orderId}`), (data) => storeOrderSchema.parse(data));
  }

  updateOrder(orderId: number, update: OrderUpdate): Promise<StoreOrder> {
    return this.call('update order', 'write', () => this.api.put(`orders/${orderId}`, update), (data) => storeOrderSchema.parse(data));
  }

  listRefunds(orderId: number): Promise<StoreRefund[]> {
    const request = () => this.api.get(`orders/${orderId}/refunds`, { per_page: 100 });
    return this.call('list refunds', 'read', request, (data) => z.array(storeRefundSchema).parse(data));
  }

  createRefund(orderId: number, refund: RefundRecord): Promise<StoreRefund> {
    const meta_data = Object.entries(refund.meta).map(([key, value]) => ({ key, value }));
    const body = { amount: refund.amount, reason: refund.reason, api_refund: false, api_restock: false, meta_data };
    const request = () => this.api.post(`orders/${orderId}/refunds`, body);
    return this.call('create refund', 'write', request, (data) => storeRefundSchema.parse(data));
  }

  /** Deletes a refund for good (WooCommerce refunds cannot be trashed). */
  async deleteRefund(orderId: number, refundId: number): Promise<void> {
    const request = () => this.api.delete(`orders/${orderId}/refunds/${refundId}`, { force: true });
    // WooCommerce answers the deleted refund: anything else (a login page, a cut answer) is no proof it happened.
    await this.call('delete refund', 'write', request, (data) => void storeRefundSchema.parse(data));
  }

  async addPrivateNote(orderId: number, note: string): Promise<void> {
    const request = () => this.api.post(`orders/${orderId}/notes`, { note, customer_note: false });
    await this.call('add order note', 'write', request, parseNoteAdded);
  }

  async addCustomerNote(orderId: number, note: string): Promise<void> {
    const request = () => this.api.post(`orders/${orderId}/notes`, { note, customer_note: true });
    await this.call('add customer note', 'write', request, parseNoteAdded);
  }

  listCustomerNotes(orderId: number): Promise<string[]> {
    return this.call('list customer notes', 'read', () => this.api.get(`orders/${orderId}/notes`, { type: 'customer' }), parseNotes);
  }

  listOrderNotes(orderId: number): Promise<string[]> {
    return this.call('list order notes', 'read', () => this.api.get(`orders/${orderId}/notes`), parseNotes);
  }

  async checkReachable(): Promise<void> {
    const request = () => this.api.get('orders', { per_page: 1, _fields: 'id' });
    await this.call('check store', 'probe', request, (data) => z.array(z.unknown()).parse(data));
  }

  getCustomer(customerId: number): Promise<StoreCustomer> {
    const request = () => this.api.get(`customers/${customerId}`);
    return this.call('get customer', 'read', request, (data) => storeCustomerSchema.parse(data));
  }

  setCustomerMeta(customerId: number, key: string, value: string): Promise<StoreCustomer> {
    const request = () => this.api.put(`customers/${customerId}`, { meta_data: [{ key, value }] });
    return this.call('update customer', 'write', request, (data) => storeCustomerSchema.parse(data));
  }

  /** Companion plugin (docs/decisions.md#d10): empties a registered customer's persistent cart and session. */
  async clearCustomerCart(customerId: number): Promise<void> {
    const request = () => this.bridge.delete(`customers/${customerId}/cart`);
    await this.call('clear customer cart', 'write', request, (data) => cartCleared.parse(data));
  }

  /** Companion plugin, under a database lock; StoreError 404 `rest_no_route` when the plugin is older or absent. */
  mergeShipmentPackage(orderId: number, merge: ShipmentPackageMerge): Promise<ShipmentPackageMerged> {
    const request = () => this.bridge.post(`orders/${orderId}/shipment-packages`, merge);
    return this.call('merge shipment package', 'write', request, (data) => shipmentPackageMergedSchema.parse(data));
  }

  getShippingRates(orderId: number, destination: ShippingDestination): Promise<StoreShippingQuote> {
    const request = () => this.bridge.get(`orders/${orderId}/shipping-rates`, { ...destination });
    return this.call('get shipping rates', 'read', request, (data) => storeShippingQuoteSchema.parse(data));
  }

  /** Companion plugin: restores once per `restoreKey` and customer (docs/decisions.md#d28). */
  restoreCustomerCart(customerId: number, orderId: number, restoreKey?: string): Promise<number> {
    const body = restoreKey === undefined ? { order_id: orderId } : { order_id: orderId, restore_key: restoreKey };
    const request = () => this.bridge.post(`customers/${customerId}/cart/restore`, body);
    return this.call('restore customer cart', 'write', request, (data) => cartRestored.parse(data));
  }
}
