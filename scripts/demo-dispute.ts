/**
 * npm run demo:dispute -- <orderId> [won|lost]
 *
 * In a running demo (npm run dev, which turns CARD_LIFECYCLE_EVENTS on): a
 * cardholder disputes the order's payment. The Stripe stand-in opens a
 * dispute and the signed `charge.dispute.created` is posted to the service;
 * with `won` or `lost`, the dispute is then closed and `charge.dispute.closed`
 * posted too.
 */
import { demoGet, demoPost, printOrder, requireDemo, usageError } from './demo-support';
import { deliverCardEvent } from './stand-ins/webhooks';

const USAGE = 'Usage: npm run demo:dispute -- <orderId> [won|lost]';

async function deliver(demo: ReturnType<typeof requireDemo>, type: string, event: object): Promise<boolean> {
  const delivery = await deliverCardEvent(demo.serviceUrl, event, demo.stripeWebhookSecret);
  console.log(`POST /api/stripe/webhook (${type}) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
  return delivery.status === 200;
}

async function main(): Promise<void> {
  const [orderArg, outcome, ...rest] = process.argv.slice(2);
  if (!orderArg || !/^[1-9]\d*$/.test(orderArg) || rest.length > 0) usageError(USAGE);
  if (outcome !== undefined && outcome !== 'won' && outcome !== 'lost') usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  const order = (await demoGet(`${demo.woocommerceUrl}/demo/orders/${orderId}`)) as { meta: Record<string, unknown> };
  const intentId = order.meta._provider_payment_intent_id ?? order.meta._payment_intent_id;
  if (typeof intentId !== 'string') {
    console.error(`Order ${orderId} has no card payment to dispute: pay it first with npm run demo:pay -- ${orderId}`);
    process.exit(1);
  }
  const opened = (await demoPost(`${demo.stripeUrl}/demo/payment_intents/${intentId}/dispute`, {})) as { dispute: { id: string }; event: object };
  console.log(`Stripe stand-in: dispute ${opened.dispute.id} opened on payment intent ${intentId}.`);
  let ok = await deliver(demo, 'charge.dispute.created', opened.event);
  await printOrder(demo, orderId);

  if (outcome) {
    const closed = (await demoPost(`${demo.stripeUrl}/demo/disputes/${opened.dispute.id}/close`, { status: outcome })) as object;
    console.log(`Stripe stand-in: dispute ${opened.dispute.id} closed (${outcome}).`);
    ok = (await deliver(demo, 'charge.dispute.closed', closed)) && ok;
    await printOrder(demo, orderId);
  }
  if (!ok) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
