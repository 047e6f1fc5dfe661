/**
 * npm run demo:refund -- <orderId> [amount]
 *
 * In a running demo (npm run dev, which turns CARD_LIFECYCLE_EVENTS on): what
 * a refund made in Stripe's dashboard does. The order's paid intent is
 * refunded in the Stripe stand-in (all that remains, or `amount` in the
 * order's currency, e.g. 10.00), then the signed `charge.refunded` event is
 * posted to the service's Stripe webhook, as Stripe would.
 */
import { toMinorUnits } from '../lib/money';
import { demoGet, demoPost, printOrder, requireDemo, usageError } from './demo-support';
import { deliverCardEvent } from './stand-ins/webhooks';

const USAGE = 'Usage: npm run demo:refund -- <orderId> [amount, e.g. 10.00]';

async function main(): Promise<void> {
  const [orderArg, amountArg, ...rest] = process.argv.slice(2);
  if (!orderArg || !/^[1-9]\d*$/.test(orderArg) || rest.length > 0) usageError(USAGE);
  if (amountArg !== undefined && !/^\d+(\.\d+)?$/.test(amountArg)) usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  const order = (await demoGet(`${demo.woocommerceUrl}/demo/orders/${orderId}`)) as { currency: string; meta: Record<string, unknown> };
  const intentId = order.meta._provider_payment_intent_id ?? order.meta._payment_intent_id;
  if (typeof intentId !== 'string') {
    console.error(`Order ${orderId} has no card payment to refund: pay it first with npm run demo:pay -- ${orderId}`);
    process.exit(1);
  }
  const amount = amountArg === undefined ? undefined : toMinorUnits(amountArg, order.currency);
  const event = (await demoPost(`${demo.stripeUrl}/demo/payment_intents/${intentId}/refund`, amount === undefined ? {} : { amount })) as object;
  console.log(`Stripe stand-in: payment intent ${intentId} refunded${amountArg ? ` (${amountArg} ${order.currency})` : ' (all that remained)'}.`);

  const delivery = await deliverCardEvent(demo.serviceUrl, event, demo.stripeWebhookSecret);
  console.log(`POST /api/stripe/webhook (charge.refunded) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
  console.log(`  refunds: curl -s ${demo.woocommerceUrl}/demo/orders/${orderId}`);
  await printOrder(demo, orderId);
  if (delivery.status !== 200) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
