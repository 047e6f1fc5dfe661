/**
 * The ShipStation V2 client (docs/decisions.md#d40). A V1 order is a V2 shipment, a V1 shipment a V2 label;
 * a label carries no order number, so its shipment is read once per read (a fulfillment carries it).
 */
import { z } from 'zod';
import type { Config } from '@/lib/config';
import { ShipStationError } from '@/lib/errors';
import type { ShipmentNotice } from '@/lib/shipment-notices';
import { SHIPSTATION_V2_REQUESTS_PER_MINUTE } from '@/lib/shared-state/shipstation-budget';
import { optionalText, ShipStationHttp, type ShipStationHttpOptions } from '@/lib/shipping/http';
import { collectPage, paging, readBatch, shipmentNotice } from '@/lib/shipping/shipstation';
import type { Listed, ShipmentsPage, ShipmentsResult } from '@/lib/shipping/shipstation';

// Only the fields the service reads; addresses, costs and label files are dropped unread.
const labelSchema = z.object({
  label_id: optionalText,
  shipment_id: optionalText,
  tracking_number: optionalText,
  carrier_code: optionalText,
  ship_date: optionalText,
  voided: z.boolean().nullish(),
  is_return_label: z.boolean().nullish(),
});

const fulfillmentSchema = z.object({
  fulfillment_id: optionalText,
  shipment_number: optionalText,
  tracking_number: optionalText,
  ship_date: optionalText,
  voided: z.boolean().nullish(),
  fulfillment_carrier_friendly_name: optionalText,
});

const shipmentSchema = z.object({ shipment_number: optionalText });

// A list answer must hold the list asked for: the other one alone is no answer, and beside it is not read.
const listSchema = z.object({ labels: z.unknown().optional(), fulfillments: z.unknown().optional(), ...paging });

export type V2ResourceKind = 'labels' | 'fulfillments';

function relativePath(url: URL, apiBaseUrl: string): string {
  const basePath = new URL(apiBaseUrl).pathname.replace(/\/+$/, '');
  return url.pathname.slice(basePath.length).replace(/\/+$/, '');
}

export class ShipStationV2Client {
  private readonly http: ShipStationHttp;

  constructor(
    private readonly settings: NonNullable<ReturnType<typeof shipStationV2Settings>>,
    options: ShipStationHttpOptions = {},
  ) {
    const headers = { 'api-key': settings.apiKey };
    this.http = new ShipStationHttp(settings.timeoutMs, headers, settings.apiBaseUrl, options, SHIPSTATION_V2_REQUESTS_PER_MINUTE);
  }

  get apiBaseUrl(): string {
    return this.settings.apiBaseUrl;
  }

  /** The label id of a TRACK_EVENT_V2's allowed `resource_url` (`/v2/labels/se-…/track`). */
  trackedLabelId(url: URL): string | undefined {
    return /^\/v2\/labels\/([A-Za-z0-9_-]{1,64})\/track$/.exec(relativePath(url, this.settings.apiBaseUrl))?.[1];
  }

  kindOf(resourceUrl: string): V2ResourceKind | undefined {
    const url = this.http.allowed(resourceUrl);
    const path = relativePath(url, this.settings.apiBaseUrl);
    return path === '/v2/labels' ? 'labels' : path === '/v2/fulfillments' ? 'fulfillments' : undefined;
  }

  /** Return labels ship nothing and are left out; voided ones are kept, marked. */
  async shipmentsAt(resourceUrl: string): Promise<ShipmentsResult> {
    const kind = this.kindOf(resourceUrl);
    if (kind === undefined) throw new ShipStationError('rejected', undefined);
    // A label's order number is read as its notice is applied (markOrderShipped), so a cut-off batch keeps what it wrote.
    return readBatch(this.http.allowed(resourceUrl), (page) => this.listPage(kind, page), this.settings.timeoutMs);
  }

  /** Return labels ship nothing and are left out; a label's order number is left to withOrderNumber (one read a page). */
  async listPage(kind: V2ResourceKind, url: URL): Promise<ShipmentsPage & { malformed: number }> {
    this.http.allowed(url.href);
    const parsed = listSchema.safeParse(await this.http.getJson(url, `get ${kind}`));
    const rows = parsed.data?.[kind];
    if (!parsed.success || !Array.isArray(rows)) throw new ShipStationError('bad_response', 200);
    return collectPage(rows, kind === 'labels' ? labelNotice : fulfillmentNotice, parsed.data);
  }

  /** A return label's parcel goes back to the shop and a voided one carries none: neither delivers the order. */
  async labelOrderNumber(labelId: string): Promise<string | undefined | { skipped: 'return_label' | 'voided_label' }> {
    const label = labelSchema.safeParse(await this.getOrMissing(`labels/${encodeURIComponent(labelId)}`, 'get label'));
    if (!label.success || !label.data.shipment_id) return undefined;
    if (label.data.is_return_label === true) return { skipped: 'return_label' };
    if (label.data.voided === true) return { skipped: 'voided_label' };
    return this.shipmentNumber(label.data.shipment_id);
  }

  async withOrderNumber(notice: ShipmentNotice): Promise<ShipmentNotice> {
    const { orderShipmentId, ...rest } = notice;
    if (notice.orderNumber !== undefined || orderShipmentId === undefined) return rest;
    return { ...rest, orderNumber: await this.shipmentNumber(orderShipmentId) };
  }

  private async shipmentNumber(shipmentId: string): Promise<string | undefined> {
    const answer = await this.getOrMissing(`shipments/${encodeURIComponent(shipmentId)}`, 'get shipment');
    const shipment = shipmentSchema.safeParse(answer);
    return shipment.success ? shipment.data.shipment_number : undefined;
  }

  /** `path` under the API's /v2/; a 404 is undefined. */
  private async getOrMissing(path: string, operation: string): Promise<unknown> {
    const url = new URL(`${this.settings.apiBaseUrl.replace(/\/+$/, '')}/v2/${path}`);
    try {
      return await this.http.getJson(url, operation);
    } catch (error) {
      if (error instanceof ShipStationError && error.failure === 'rejected' && error.status === 404) return undefined;
      throw error;
    }
  }
}

function labelNotice(raw: unknown): Listed {
  const label = labelSchema.safeParse(raw);
  if (!label.success) return 'malformed';
  const { label_id, shipment_id, tracking_number, carrier_code, ship_date, voided, is_return_label } = label.data;
  if (is_return_label === true) return 'return';
  const fields = { trackingNumber: tracking_number, carrier: carrier_code, shipDate: ship_date, shipmentId: label_id, voided };
  const notice = shipmentNotice({ orderNumber: undefined, ...fields });
  return shipment_id === undefined ? notice : { ...notice, orderShipmentId: shipment_id };
}

function fulfillmentNotice(raw: unknown): Listed {
  const fulfillment = fulfillmentSchema.safeParse(raw);
  if (!fulfillment.success) return 'malformed';
  const f = fulfillment.data;
  const carrier = f.fulfillment_carrier_friendly_name;
  const fields = { trackingNumber: f.tracking_number, carrier, shipDate: f.ship_date, shipmentId: f.fulfillment_id, voided: f.voided };
  return shipmentNotice({ orderNumber: f.shipment_number, ...fields });
}

export function shipStationV2Settings(config: Pick<Config, 'shippingV2' | 'upstreamTimeoutMs'>) {
  const { apiKey, apiBaseUrl } = config.shippingV2;
  return apiKey ? { apiKey, apiBaseUrl, timeoutMs: config.upstreamTimeoutMs } : undefined;
}
