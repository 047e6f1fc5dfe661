import Link from 'next/link';
import { checkoutTokenFor } from '../../../../lib/checkout-token';
import { getOrder, type ShopOrder } from '../../../../lib/shop';

export const dynamic = 'force-dynamic';

type Search = { payment_intent?: string; redirect_status?: string };

/** What the customer reads: the order's state as the shop holds it, which only Stripe's webhook makes paid. */
function outcome(order: ShopOrder, search: Search): { text: string; wait?: boolean; retry?: boolean } {
  if (['processing', 'completed', 'shipped'].includes(order.status)) return { text: 'Paid. Thank you for your order!' };
  if (order.status === 'on-hold') return { text: 'Your payment was received; the shop is checking it before your order goes out.' };
  if (search.redirect_status === 'failed') return { text: 'The payment did not go through. You can try again.', retry: true };
  if (order.status === 'pending') {
    return search.redirect_status === 'succeeded' || search.redirect_status === 'processing'
      ? { text: 'Your payment is on its way: this page updates when the shop has it.', wait: true }
      : { text: 'This order is not paid yet.', retry: true };
  }
  return { text: `This order is ${order.status}.` };
}

/** /checkout/<order id>/complete: Stripe's return_url. */
export default async function CompletePage({ params, searchParams }: { params: Promise<{ orderId: string }>; searchParams: Promise<Search> }) {
  const orderId = Number((await params).orderId);
  const search = await searchParams;
  // Only the browser that checked out reads the order's state.
  if (!Number.isSafeInteger(orderId) || orderId <= 0 || !(await checkoutTokenFor(orderId))) {
    return (
      <main>
        <p>This order is not open in this browser.</p>
        <Link href="/">Back to the shop</Link>
      </main>
    );
  }
  const order = await getOrder(orderId);
  const intentOfOrder = order.meta_data.find((meta) => meta.key === '_payment_intent_id')?.value;
  const mismatch = search.payment_intent !== undefined && intentOfOrder !== undefined && search.payment_intent !== intentOfOrder;
  const { text, wait, retry } = mismatch ? { text: 'This payment is not the one of this order.', retry: false } : outcome(order, search);
  return (
    <main>
      {wait && <meta httpEquiv="refresh" content="3" />}
      <h1>Order #{order.id}</h1>
      <p role="status">{text}</p>
      <p>
        Status: {order.status}; total {order.total} {order.currency}
      </p>
      {retry && <Link href={`/checkout/${order.id}`}>Pay for this order</Link>}
    </main>
  );
}
