/**
 * npm run demo:ship -- <orderId> [--tracking <number>] [--carrier <name>]
 *
 * In a running demo (npm run dev): posts the shipment notification ShipStation
 * would send (SHIP_NOTIFY with tracking details, carrying the demo's
 * x-webhook-secret) to the service's shipping webhook, then shows the order.
 * Only a paid order (processing or awaiting_shipment) becomes shipped.
 */
import { printOrder, requireDemo, usageError } from './demo-support';
import { deliverShipNotification, shipNotification } from '../stand-ins/webhook-deliveries';

const USAGE = 'Usage: npm run demo:ship -- <orderId> [--tracking <number>] [--carrier <name>]';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const positional: string[] = [];
  let trackingNumber: string | undefined;
  let carrier: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--tracking') trackingNumber = args[++i];
    else if (arg === '--carrier') carrier = args[++i];
    else positional.push(arg);
  }
  const [orderArg] = positional;
  if (!orderArg || positional.length > 1 || !/^[1-9]\d*$/.test(orderArg)) usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  const payload = shipNotification({ orderId, trackingNumber, carrier });
  const delivery = await deliverShipNotification(demo.serviceUrl, payload, demo.shippingWebhookSecret);
  console.log(`POST /api/shipping/webhook (SHIP_NOTIFY, ${payload.carrier} ${payload.tracking_number}) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
  await printOrder(demo, orderId);
  if (delivery.status !== 200) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
