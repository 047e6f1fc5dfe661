/**
 * npm run demo:ship -- <orderId> [--tracking <number>] [--carrier <name>] [--v2 [--delivered]]
 *
 * In a running demo (npm run dev): posts the shipment notification ShipStation
 * would send (SHIP_NOTIFY with tracking details, carrying the demo's
 * x-webhook-secret) to the service's shipping webhook, then shows the order.
 * Only a paid order (processing or awaiting_shipment) becomes shipped.
 *
 * --v2: as ShipStation V2 ships it instead: the V2 stand-in creates a label for the order and
 * posts LABEL_CREATED_V2, signed with its key (the service reads the label and its shipment from
 * the stand-in); with --delivered, it then posts TRACK_EVENT_V2 `DE` for that label.
 */
import { demoPost, printOrder, requireDemo, usageError } from './demo-support';
import { deliverShipNotification, shipNotification } from '../stand-ins/webhook-deliveries';

const USAGE = 'Usage: npm run demo:ship -- <orderId> [--tracking <number>] [--carrier <name>] [--v2 [--delivered]]';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const positional: string[] = [];
  let trackingNumber: string | undefined;
  let carrier: string | undefined;
  let v2 = false;
  let delivered = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--tracking') trackingNumber = args[++i];
    else if (arg === '--carrier') carrier = args[++i];
    else if (arg === '--v2') v2 = true;
    else if (arg === '--delivered') delivered = true;
    else positional.push(arg);
  }
  const [orderArg] = positional;
  if (!orderArg || positional.length > 1 || !/^[1-9]\d*$/.test(orderArg) || (delivered && !v2)) usageError(USAGE);
  const orderId = Number(orderArg);
  const demo = requireDemo();

  if (v2) {
    if (!demo.shipstationV2Url) {
      console.error('This demo has no ShipStation V2 stand-in: restart it with `npm run dev`.');
      process.exit(1);
    }
    const steps: [string, string][] = [['/demo/ship', 'LABEL_CREATED_V2']];
    if (delivered) steps.push(['/demo/deliver', 'TRACK_EVENT_V2 DE']);
    let failed = false;
    for (const [control, what] of steps) {
      const delivery = (await demoPost(`${demo.shipstationV2Url}${control}`, { orderId, trackingNumber, carrier, serviceUrl: demo.serviceUrl })) as {
        status: number;
        body: unknown;
      };
      console.log(`POST /api/shipping/webhook (${what}, signed by the ShipStation V2 stand-in) → HTTP ${delivery.status} ${JSON.stringify(delivery.body)}`);
      failed ||= delivery.status !== 200;
    }
    await printOrder(demo, orderId);
    if (failed) process.exit(1);
    return;
  }

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
