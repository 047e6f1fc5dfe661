/** POST /api/submit-order (docs/contract.md#spec-4-2): a pending order submitted for manual payment. */
import { checkoutAddressChange } from '@/lib/checkout/addresses';
import { rerateExpressShipping } from '@/lib/checkout/express-rerate';
import { loadPayableOrder, orderIdFromToken } from '@/lib/checkout/load-payable-order';
import { META } from '@/lib/orders/meta-keys';
import type { SubmitOrderRequest } from '@/lib/checkout/schemas';
import type { SubmitOrderResponse } from '@/lib/http/responses';
import type { RequestContext } from '@/lib/log';
import { sendCustomerMessage } from '@/lib/orders/customer-message';
import { buildOrderUpdate } from '@/lib/orders/mutation';
import { normalizeOrder } from '@/lib/orders/normalize';
import { manualPaymentAwaitedNote } from '@/lib/orders/notes';
import { ORDER_STATUS } from '@/lib/order-statuses';
import type { Services } from '@/lib/services';

export async function submitOrderForManualPayment(
  input: SubmitOrderRequest,
  services: Services,
  context: RequestContext,
): Promise<SubmitOrderResponse> {
  const orderId = await orderIdFromToken(input.token, services, context);
  const { manualTitle } = services.config.paymentMethods;

  return services.orderLocks.withOrderLock(orderId, async () => {
    const { order } = await loadPayableOrder(orderId, services);
    const now = new Date().toISOString();
    const store = services.store();
    const addresses = checkoutAddressChange(input, { shippingFallsBackToBilling: true });
    // Before the customer message, so a refused address writes nothing.
    const rerated = await rerateExpressShipping(store, order, addresses?.shipping);
    const message = await sendCustomerMessage(store, order, { customerNote: manualPaymentAwaitedNote(manualTitle) }, services.config.customerMessages);
    const updated = await store.updateOrder(
      orderId,
      buildOrderUpdate(order, {
        ...message,
        ...addresses,
        ...rerated.line,
        status: ORDER_STATUS.pending,
        metaMode: 'replace',
        meta: {
          [META.paymentMethod]: 'manual',
          [META.paymentMethodTitle]: manualTitle,
          [META.manualPaymentStatus]: 'pending-screenshot',
          [META.orderSubmittedAt]: now,
          [META.checkoutAddressUpdated]: now,
          ...rerated.meta,
        },
      }),
    );
    // The total after the address write: WooCommerce recalculates taxes for the new addresses.
    const normalized = normalizeOrder(updated);
    context.outcome = 'submitted';
    return { success: true, order_id: orderId, total: normalized.total_cents, currency: normalized.currency };
  });
}
