import Link from 'next/link';
import { checkoutTokenFor } from '../../../lib/checkout-token';
import { getOrder } from '../../../lib/shop';
import { PaymentForm } from './payment-form';

export const dynamic = 'force-dynamic';

/** /checkout/<order id>: the order as the shop priced it, the customer's address, then the payment. */
export default async function CheckoutPage({ params }: { params: Promise<{ orderId: string }> }) {
  const orderId = Number((await params).orderId);
  const token = Number.isSafeInteger(orderId) && orderId > 0 ? await checkoutTokenFor(orderId) : undefined;
  if (!token) {
    return (
      <main>
        <p>This checkout is not open in this browser (or it expired).</p>
        <Link href="/">Back to the shop</Link>
      </main>
    );
  }
  const order = await getOrder(orderId);
  return (
    <main>
      <h1>Order #{order.id}</h1>
      <ul>
        {order.line_items.map((line, index) => (
          <li key={index}>
            {line.quantity} × {line.name}: {line.total} {order.currency}
          </li>
        ))}
      </ul>
      <p>
        Total: {order.total} {order.currency} (tax for your address is added when you continue to payment)
      </p>
      {/* Express checkout (Apple Pay, Google Pay, Link with the shop's shipping rates) goes here. */}
      {/* Saved cards of a returning customer: shown by the Payment Element below once the service sends a customer session. */}
      <PaymentForm token={token} orderId={order.id} />
    </main>
  );
}
