/**
 * The ShipStation V2 stand-in on loopback for the demo: the API and JWKS of v2.ts, plus demo
 * controls that do what ShipStation does when a shop ships in its app, since only this process
 * holds the signing key:
 * - POST /demo/ship {orderId, trackingNumber?, carrier?, serviceUrl}: a label for the order in a
 *   new batch, then LABEL_CREATED_V2, signed, posted to the service's shipping webhook;
 * - POST /demo/deliver {orderId, serviceUrl}: TRACK_EVENT_V2 `DE` for the order's last label.
 * Each answers `{status, body}`, the service's answer to the delivery. Not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import { listen, listenPreferring, serveFetch, type RunningServer } from '../loopback-http';
import { ShipStationV2Model, trackEvent } from './v2';

export interface ShipStationV2StandIn extends RunningServer {
  model: ShipStationV2Model;
}

async function post(serviceUrl: string, delivery: { body: string; headers: Record<string, string> }) {
  const response = await fetch(`${serviceUrl.replace(/\/+$/, '')}/api/shipping/webhook`, { method: 'POST', headers: delivery.headers, body: delivery.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, body };
}

export async function startShipStationV2StandIn(options: { port?: number; preferredPort?: number } = {}): Promise<ShipStationV2StandIn> {
  const model = new ShipStationV2Model();
  let baseUrl = '';
  const handler = serveFetch(async (request) => {
    const url = new URL(request.url);
    if (request.method !== 'POST' || !url.pathname.startsWith('/demo/')) return model.handler(request);
    const input = (await request.json().catch(() => ({}))) as { orderId?: unknown; trackingNumber?: unknown; carrier?: unknown; serviceUrl?: unknown };
    const orderNumber = String(input.orderId ?? '');
    if (!/^[1-9]\d*$/.test(orderNumber) || typeof input.serviceUrl !== 'string') {
      return Response.json({ error: 'orderId and serviceUrl are required' }, { status: 400 });
    }
    if (url.pathname === '/demo/ship') {
      const batchId = `se-${randomBytes(4).toString('hex')}`;
      const resourceUrl = model.addBatch(
        batchId,
        [
          {
            orderNumber,
            trackingNumber: typeof input.trackingNumber === 'string' ? input.trackingNumber : `9400${randomBytes(9).toString('hex').replace(/\D/g, '').padEnd(18, '7').slice(0, 18)}`,
            carrierCode: typeof input.carrier === 'string' ? input.carrier : 'stamps_com',
            shipDate: new Date().toISOString().slice(0, 10),
          },
        ],
        baseUrl,
      );
      return Response.json(await post(input.serviceUrl, model.delivery({ resource_url: resourceUrl, resource_type: 'LABEL_CREATED_V2' })));
    }
    if (url.pathname === '/demo/deliver') {
      const shipment = model.shipmentFor(orderNumber);
      const label = [...model.labels].reverse().find((l) => l.shipment_id === shipment && l.voided !== true);
      if (!label) return Response.json({ error: `no label for order ${orderNumber}: ship it first` }, { status: 404 });
      const deliveredAt = new Date().toISOString();
      model.tracking.set(String(label.label_id), { statusCode: 'DE', deliveredAt });
      return Response.json(await post(input.serviceUrl, model.delivery(trackEvent(baseUrl, label, 'DE', deliveredAt))));
    }
    return Response.json({ error: 'unknown demo control' }, { status: 404 });
  });
  const server = options.preferredPort
    ? await listenPreferring(handler, options.preferredPort, 'shipstation v2 stand-in')
    : await listen(handler, options.port ?? 0, 'shipstation v2 stand-in');
  baseUrl = server.url;
  return { ...server, model };
}
