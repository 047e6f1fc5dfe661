/**
 * npm run demo:dispute -- <orderId> [won|lost]
 *
 * In a running demo (npm run dev, which turns CARD_LIFECYCLE_EVENTS on): a
 * cardholder disputes the order's payment. The Stripe stand-in opens a
 * dispute and the signed `charge.dispute.created` is posted to the service;
 * with `won` or `lost`, the dispute is then closed and `charge.dispute.closed`
 * posted too.
 */
import { closeCardDispute, NoCardPaymentError, openCardDispute } from '../stand-ins/demo/card-lifecycle';
import type { Delivery } from '../stand-ins/webhook-deliveries';
import { printOrder, requireDemo, usageError } from './demo-support';

const USAGE = 'Usage: npm run demo:dispute -- <orderId> [won|lost]';

function report(type: string, delivery: Delivery): boolean {
  console.log(`POST /api/stripe/webhook (${type}) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
  return delivery.status === 200;
}

async function main(): Promise<void> {
  const [orderArg, outcome, ...rest] = process.argv.slice(2);
  if (!orderArg || !/^[1-9]\d*$/.test(orderArg) || rest.length > 0) usageError(USAGE);
  if (outcome !== undefined && outcome !== 'won' && outcome !== 'lost') usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  const opened = await openCardDispute(demo, orderId);
  console.log(`Stripe stand-in: dispute ${opened.disputeId} opened on payment intent ${opened.intentId}.`);
  let ok = report('charge.dispute.created', opened.delivery);
  await printOrder(demo, orderId);

  if (outcome) {
    const closed = await closeCardDispute(demo, opened.disputeId, outcome);
    console.log(`Stripe stand-in: dispute ${opened.disputeId} closed (${outcome}).`);
    ok = report('charge.dispute.closed', closed) && ok;
    await printOrder(demo, orderId);
  }
  if (!ok) process.exit(1);
}

main().catch((error: unknown) => {
  if (error instanceof NoCardPaymentError) console.error(`${error.message} Run: npm run demo:pay -- ${process.argv[2]}`);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
