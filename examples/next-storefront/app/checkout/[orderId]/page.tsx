import Link from 'next/link';
import { checkoutTokenFor } from '../../../lib/checkout-token';
import { getOrder, minorUnits, type ShopOrder } from '../../../lib/shop';
import { ExpressCheckout, type ExpressCheckoutProps } from './express-checkout';
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
      <h2>Express checkout</h2>
      <ExpressCheckout token={token} orderId={order.id} {...walletStart(order)} />
      <h2>Or pay by card</h2>
      {/* A registered customer may save the card; their saved cards show in the Payment Element (the service's customer session). */}
      <PaymentForm token={token} orderId={order.id} registered={order.customer_id > 0} />
    </main>
  );
}

/** What the wallet shows when it opens, before it reports an address: the order as the shop priced it. */
function walletStart(order: ShopOrder): Omit<ExpressCheckoutProps, 'token' | 'orderId'> {
  const cents = (amount: string) => minorUnits(amount, order.currency);
  const line = order.shipping_lines[0];
  const items = order.line_items.reduce((sum, item) => sum + cents(item.total), 0);
  const lineItems = [
    { name: 'Subtotal', amount: items },
    { name: 'Shipping', amount: cents(order.shipping_total) },
    { name: 'Tax', amount: cents(order.total_tax) },
  ].filter((item) => item.name === 'Subtotal' || item.amount !== 0);
  return {
    amount: cents(order.total),
    currency: order.currency.toLowerCase(),
    currentRate: { id: line ? `${line.method_id}:${line.instance_id ?? ''}` : 'shipping', displayName: line?.method_title ?? 'Shipping', amount: line ? cents(line.total) + cents(line.total_tax) : 0 },
    lineItems,
  };
}
