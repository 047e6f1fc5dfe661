// The order's payment intents as its meta records them.
import { META } from '@/lib/orders/meta-keys';
import type { StoreOrder } from '@/lib/store/types';

/** The last one: webhooks append. */
export function paidIntentId(order: StoreOrder): string | undefined {
  const recorded = order.meta_data.filter((m) => m.key === META.providerPaymentIntentId && typeof m.value === 'string' && m.value !== '');
  return recorded.at(-1)?.value as string | undefined;
}

export function checkoutIntentId(order: StoreOrder): string | undefined {
  const entry = order.meta_data.find((m) => m.key === META.paymentIntentId && typeof m.value === 'string' && m.value !== '');
  return entry?.value as string | undefined;
}
