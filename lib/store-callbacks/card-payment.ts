// What the store's calls share: the order (docs/decisions.md#d22).
import { StoreCallbackRefusedError, StoreError } from '@/lib/errors';
import type { Services } from '@/lib/services';
import type { StoreOrder } from '@/lib/store/types';

export async function orderForCallback(orderId: number, services: Services): Promise<StoreOrder> {
  try {
    return await services.store().getOrder(orderId);
  } catch (error) {
    if (error instanceof StoreError && error.failure === 'not_found') throw new StoreCallbackRefusedError(`Order #${orderId} was not found in the store.`);
    throw error;
  }
}
