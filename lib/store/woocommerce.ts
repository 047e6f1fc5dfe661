/**
 * The store client: WooCommerce REST v3 through @woocommerce/woocommerce-rest-api,
 * plus the companion plugin's cart routes (DECISIONS 10).
 *
 * Every call has the upstream timeout. Failures become StoreError with the
 * HTTP status and WooCommerce's error code only: the library's error objects
 * carry the request configuration (including the consumer keys) and the
 * response body, and neither may reach a log line or a response.
 */
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import { StoreError, type StoreFailure } from '@/lib/errors';
import type { StoreSettings } from '@/lib/config';
import { storeOrderSchema, type OrderUpdate, type Store, type StoreOrder } from '@/lib/store/types';
import { traceCall } from '@/lib/telemetry';

export const CART_BRIDGE_NAMESPACE = 'wc-checkout-bridge/v1';

interface UpstreamFailure {
  status: number | undefined;
  code: string | undefined;
  timedOut: boolean;
}

function describeFailure(error: unknown): UpstreamFailure {
  const e = error as {
    code?: unknown;
    response?: { status?: unknown; data?: unknown };
  };
  const status = typeof e?.response?.status === 'number' ? e.response.status : undefined;
  const data = e?.response?.data as { code?: unknown } | undefined;
  const wooCode = typeof data?.code === 'string' ? data.code.slice(0, 100) : undefined;
  const timedOut = e?.code === 'ECONNABORTED' || e?.code === 'ETIMEDOUT';
  return { status, code: wooCode, timedOut };
}

function classify(failure: UpstreamFailure): StoreFailure {
  if (failure.timedOut) return 'timeout';
  if (failure.status === undefined || failure.status >= 500) return 'unavailable';
  if (failure.status === 404) return 'not_found';
  // WooCommerce answers 400 rest_shop_order_invalid_id / woocommerce_rest_shop_order_invalid_id for a missing order.
  if (failure.code?.endsWith('_invalid_id')) return 'not_found';
  if (failure.code === 'rest_invalid_param') return 'invalid_param';
  return 'rejected';
}

export class WooCommerceStore implements Store {
  private readonly api: WooCommerceRestApi;
  private readonly bridge: WooCommerceRestApi;

  constructor(
    settings: StoreSettings,
    private readonly timeoutMs: number,
  ) {
    const options = {
      url: settings.url,
      consumerKey: settings.consumerKey,
      consumerSecret: settings.consumerSecret,
      timeout: timeoutMs,
      // WooCommerce answers errors as JSON too; keep axios from throwing on parse quirks.
      axiosConfig: { maxRedirects: 0 },
    };
    this.api = new WooCommerceRestApi({ ...options, version: 'wc/v3' });
    this.bridge = new WooCommerceRestApi({ ...options, version: CART_BRIDGE_NAMESPACE as 'wc/v3' });
  }

  private async call<T>(operation: string, request: () => Promise<{ data: unknown }>, parse: (data: unknown) => T): Promise<T> {
    let data: unknown;
    let timer: NodeJS.Timeout | undefined;
    // axios's own timeout bounds socket idleness only; this bounds the whole call.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreError(operation, 'timeout', undefined, undefined)), this.timeoutMs);
    });
    try {
      ({ data } = await traceCall('store', operation, () => Promise.race([request(), deadline])));
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const failure = describeFailure(error);
      throw new StoreError(operation, classify(failure), failure.status, failure.code);
    } finally {
      clearTimeout(timer);
    }
    try {
      return parse(data);
    } catch {
      throw new StoreError(operation, 'bad_response', 200, undefined);
    }
  }

  getOrder(orderId: number): Promise<StoreOrder> {
    return this.call('get order', () => this.api.get(`orders/${orderId}`), (data) => storeOrderSchema.parse(data));
  }

  updateOrder(orderId: number, update: OrderUpdate): Promise<StoreOrder> {
    return this.call(
      'update order',
      () => this.api.put(`orders/${orderId}`, update),
      (data) => storeOrderSchema.parse(data),
    );
  }

  async checkReachable(): Promise<void> {
    await this.call(
      'check store',
      () => this.api.get('orders', { per_page: 1, _fields: 'id' }),
      (data) => {
        if (!Array.isArray(data)) throw new Error('unexpected answer');
      },
    );
  }

  async clearCustomerCart(customerId: number): Promise<void> {
    await this.call(
      'clear customer cart',
      () => this.bridge.delete(`customers/${customerId}/cart`),
      (data) => {
        if ((data as { cleared?: unknown })?.cleared !== true) throw new Error('unexpected answer');
      },
    );
  }

  restoreCustomerCart(customerId: number, orderId: number): Promise<number> {
    return this.call(
      'restore customer cart',
      () => this.bridge.post(`customers/${customerId}/cart/restore`, { order_id: orderId }),
      (data) => {
        const answer = data as { restored?: unknown; items?: unknown };
        if (answer?.restored !== true) throw new Error('unexpected answer');
        return typeof answer.items === 'number' ? answer.items : 0;
      },
    );
  }
}
