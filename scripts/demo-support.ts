/** What the demo helper scripts share: finding the running demo and reading the stand-ins. */
import { demoGet } from '../stand-ins/demo/card-lifecycle';
import { readDemoState, type DemoState } from '../stand-ins/demo/world';

export { demoGet, demoPost } from '../stand-ins/demo/card-lifecycle';

export function usageError(usage: string): never {
  console.error(usage);
  process.exit(2);
}

export function requireDemo(): DemoState {
  const demo = readDemoState();
  if (!demo) {
    console.error('No demo is running here: start one with `npm run dev` (with no WooCommerce or Stripe configured) and keep it open.');
    process.exit(1);
  }
  return demo;
}

/** Prints the order as the WooCommerce stand-in holds it now. */
export async function printOrder(demo: DemoState, orderId: number): Promise<void> {
  const url = `${demo.woocommerceUrl}/demo/orders/${orderId}`;
  const order = (await demoGet(url)) as { status: string; total: string; currency: string; customer_note: string; date_paid: string | null };
  console.log(`Order ${orderId} now: status ${order.status}, total ${order.total} ${order.currency}${order.date_paid ? `, paid ${order.date_paid}` : ''}`);
  if (order.customer_note) console.log(`  customer note: ${order.customer_note}`);
  console.log(`  full state: curl -s ${url}`);
}
