'use server';
import { redirect } from 'next/navigation';
import { startCheckout } from '../lib/checkout-token';
import { createPendingOrder, type CartLine } from '../lib/shop';

const MAX_LINES = 50;
const MAX_QUANTITY = 99;

/** The cart the browser posted: product ids and quantities, nothing else (prices come from the shop). */
function cartOf(form: FormData): CartLine[] {
  const lines: CartLine[] = [];
  for (const [name, value] of form.entries()) {
    const productId = /^quantity_([1-9]\d{0,9})$/.exec(name)?.[1];
    const quantity = Number(value);
    if (productId && Number.isInteger(quantity) && quantity > 0 && quantity <= MAX_QUANTITY) lines.push({ productId: Number(productId), quantity });
  }
  return lines.slice(0, MAX_LINES);
}

/** Checkout: the cart becomes a pending WooCommerce order, whose token this server mints; then the payment page. */
export async function checkOut(form: FormData): Promise<void> {
  const cart = cartOf(form);
  if (cart.length === 0) redirect('/?empty=1');
  const order = await createPendingOrder(cart);
  await startCheckout(order.id);
  redirect(`/checkout/${order.id}`);
}
