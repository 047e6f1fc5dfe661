/**
 * npm run demo:refund -- <orderId> [amount]
 *
 * In a running demo (npm run dev, which turns CARD_LIFECYCLE_EVENTS on): what
 * a refund made in Stripe's dashboard does. The order's paid intent is
 * refunded in the Stripe stand-in (all that remains, or `amount` in the
 * order's currency, e.g. 10.00), then the signed `charge.refunded` event is
 * posted to the service's Stripe webhook, as Stripe would.
 */
import { NoCardPaymentError, refundCardPayment } from '../stand-ins/demo/card-lifecycle';
import { printOrder, requireDemo, usageError } from './demo-support';

const USAGE = 'Usage: npm run demo:refund -- <orderId> [amount, e.g. 10.00]';

async function main(): Promise<void> {
  const [orderArg, amountArg, ...rest] = process.argv.slice(2);
  if (!orderArg || !/^[1-9]\d*$/.test(orderArg) || rest.length > 0) usageError(USAGE);
  if (amountArg !== undefined && !/^\d+(\.\d+)?$/.test(amountArg)) usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  const { intentId, currency, delivery } = await refundCardPayment(demo, orderId, amountArg);
  console.log(`Stripe stand-in: payment intent ${intentId} refunded${amountArg ? ` (${amountArg} ${currency})` : ' (all that remained)'}.`);
  console.log(`POST /api/stripe/webhook (charge.refunded) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
  console.log(`  refunds: curl -s ${demo.woocommerceUrl}/demo/orders/${orderId}`);
  await printOrder(demo, orderId);
  if (delivery.status !== 200) process.exit(1);
}

main().catch((error: unknown) => {
  if (error instanceof NoCardPaymentError) console.error(`${error.message} Run: npm run demo:pay -- ${process.argv[2]}`);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
