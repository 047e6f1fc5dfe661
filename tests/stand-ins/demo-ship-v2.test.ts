/**
 * `npm run demo:ship -- <id> --v2 [--delivered]` as the demo runs it: the ShipStation V2 stand-in on
 * loopback creates the label and posts its signed deliveries to the service's shipping route
 * (served here in-process on loopback, configured by the demo's own environment), which reads the
 * label, its shipment and the JWKS back from the stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/shipping/webhook/route';
import { demoServiceEnv, startDemoStandIns, type DemoStandIns } from '@/stand-ins/demo/world';
import { listen, serveFetch, type RunningServer } from '@/stand-ins/loopback-http';
import { V2_STAND_IN_API_KEY } from '@/stand-ins/shipstation/v2';
import { useTestEnv } from '../support/env';

let standIns: DemoStandIns;
let service: RunningServer;

beforeAll(async () => {
  standIns = await startDemoStandIns();
  service = await listen(serveFetch((request) => POST(request)));
  useTestEnv(
    demoServiceEnv({
      woocommerce: standIns.woocommerce.url,
      stripe: standIns.stripe.url,
      storefrontOrigins: ['http://localhost:3001'],
      shipstationV2: standIns.shipstationV2.url,
    }),
  );
});

afterAll(async () => {
  await service?.close();
  await standIns?.close();
});

const control = async (path: string, body: object) =>
  (await fetch(`${standIns.shipstationV2.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();

describe('the demo ships through ShipStation V2', () => {
  it('a paid order is shipped by a signed LABEL_CREATED_V2, then completed by its delivery', async () => {
    const shipped = await control('/demo/ship', { orderId: 1004, trackingNumber: '9400111899223197421004', serviceUrl: service.url });

    expect(shipped).toEqual({ status: 200, body: { received: true } });
    const order = standIns.woocommerce.model.get(1004);
    expect(order.status).toBe('shipped');
    expect(order.customer_note).toContain('Tracking Number: 9400111899223197421004 | Carrier: stamps_com');
    expect(standIns.shipstationV2.model.jwksReads).toBe(1);

    const delivered = await control('/demo/deliver', { orderId: 1004, serviceUrl: service.url });

    expect(delivered).toEqual({ status: 200, body: { received: true } });
    expect(standIns.woocommerce.model.get(1004).status).toBe('completed');
    const label = standIns.shipstationV2.model.labels.at(-1) as { label_id: string };
    const track = await fetch(`${standIns.shipstationV2.url}/v2/labels/${label.label_id}/track`, { headers: { 'api-key': V2_STAND_IN_API_KEY } });
    expect(await track.json()).toMatchObject({ tracking_number: '9400111899223197421004', status_code: 'DE' });
  });
});
