/**
 * npm run demo:pay -- <orderId> [succeeded|failed]
 *
 * In a running demo (npm run dev): what a customer's card payment does. The
 * order's payment intent is completed (or declined) in the Stripe stand-in,
 * then the matching signed event (payment_intent.succeeded or
 * payment_intent.payment_failed) is posted to the service's Stripe webhook,
 * exactly as Stripe would. An order without a payment intent gets one first,
 * through the service's own POST /api/payment-intent.
 */
import { mintCheckoutToken } from '../lib/security/checkout-token';
import { demoGet, demoPost, printOrder, requireDemo, usageError } from './demo-support';
import { cardEvent, deliverCardEvent } from '../stand-ins/webhook-deliveries';
import type { StripeIntent } from '../stand-ins/stripe/objects';

const USAGE = 'Usage: npm run demo:pay -- <orderId> [succeeded|failed]';

async function main(): Promise<void> {
  const [orderArg, outcomeArg = 'succeeded', ...rest] = process.argv.slice(2);
  if (!orderArg || !/^[1-9]\d*$/.test(orderArg) || rest.length > 0) usageError(USAGE);
  if (outcomeArg !== 'succeeded' && outcomeArg !== 'failed') usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  const order = (await demoGet(`${demo.woocommerceUrl}/demo/orders/${orderId}`)) as { meta: Record<string, unknown> };
  let intentId = typeof order.meta._payment_intent_id === 'string' ? order.meta._payment_intent_id : undefined;
  if (!intentId) {
    console.log(`Order ${orderId} has no payment intent yet: asking the service for one (POST /api/payment-intent).`);
    const token = await mintCheckoutToken(orderId, { secret: demo.checkoutTokenSecret });
    const response = await fetch(`${demo.serviceUrl}/api/payment-intent`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: demo.storefrontOrigin },
      body: JSON.stringify({ token }),
    });
    const body = (await response.json()) as { payment_intent_id?: string };
    if (!response.ok || !body.payment_intent_id) {
      console.error(`The service refused (HTTP ${response.status}):`, JSON.stringify(body));
      process.exit(1);
    }
    intentId = body.payment_intent_id;
  }

  const action = outcomeArg === 'succeeded' ? 'succeed' : 'fail';
  const intent = (await demoPost(`${demo.stripeUrl}/demo/payment_intents/${intentId}/${action}`, {})) as StripeIntent;
  console.log(`Stripe stand-in: payment intent ${intent.id} is now ${intent.status}${intent.last_payment_error ? ` (${intent.last_payment_error.message})` : ''}.`);

  const type = outcomeArg === 'succeeded' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed';
  const delivery = await deliverCardEvent(demo.serviceUrl, cardEvent(type, intent), demo.stripeWebhookSecret);
  console.log(`POST /api/stripe/webhook (${type}) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
  await printOrder(demo, orderId);
  if (delivery.status !== 200) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
