/**
 * The ShipStation V1 client: reads a delivery's `resource_url` (docs/decisions.md#d11) page by page; a read
 * that stops early hands back the first page it did not read, so the caller queues the rest and none is dropped.
 */
import { z } from 'zod';
import type { Config } from '@/lib/config';
import { ShipStationError } from '@/lib/errors';
import type { ShipmentNotice } from '@/lib/shipment-notices';
import { optionalText, ShipStationHttp, type ShipStationHttpOptions } from '@/lib/shipping/http';
import { requestTimeLeftMs } from '@/lib/upstream/budget';

/** Voided shipments are kept, marked, so the order can note them. */
export interface ShipmentsPage {
  notices: ShipmentNotice[];
  voided: number;
  page: number;
  pages: number;
  /** Listed but not shipments of an order (V2's return labels): they count as the page's content. */
  skipped?: number;
}

// Only the fields the service reads; the rest of ShipStation's shipment (addresses, label data) is dropped unread.
const shipmentSchema = z.object({
  shipmentId: optionalText,
  orderNumber: optionalText,
  trackingNumber: optionalText,
  carrierCode: optionalText,
  shipDate: optionalText,
  voided: z.boolean().nullish(),
});

/** Both APIs' paging fields. */
export const paging = { page: z.number().int().nullish(), pages: z.number().int().nullish() };
const shipmentsResponseSchema = z.object({ shipments: z.array(z.unknown()), ...paging });

/** A listed row as a notice; 'return' for a row that ships nothing to the customer (V2's return labels). */
export type Listed = ShipmentNotice | 'malformed' | 'return';

/** A notice without an empty shipment id or a voided flag that is not `true`. */
export function shipmentNotice(fields: Omit<ShipmentNotice, 'voided'> & { voided?: boolean | null | undefined }): ShipmentNotice {
  const { shipmentId, voided, ...notice } = fields;
  return { ...notice, ...(shipmentId !== undefined ? { shipmentId } : {}), ...(voided === true ? { voided: true } : {}) };
}

/** A row of an unexpected shape is counted, not fatal; voided ones are kept, marked, so the order can note them. */
export function collectPage(
  rows: unknown[],
  noticeOf: (raw: unknown) => Listed,
  position: { page?: number | null | undefined; pages?: number | null | undefined },
): ShipmentsPage & { malformed: number } {
  const { page: at, pages } = position;
  const page = { notices: [] as ShipmentNotice[], voided: 0, malformed: 0, skipped: 0, page: at ?? 1, pages: pages ?? 1 };
  for (const raw of rows) {
    const notice = noticeOf(raw);
    if (notice === 'malformed') page.malformed += 1;
    else if (notice === 'return') page.skipped += 1;
    else {
      if (notice.voided) page.voided += 1;
      page.notices.push(notice);
    }
  }
  return page;
}

export function parseShipmentsResponse(data: unknown): ShipmentsPage & { malformed: number } {
  const parsed = shipmentsResponseSchema.safeParse(data);
  if (!parsed.success) throw new ShipStationError('bad_response', 200);
  return collectPage(parsed.data.shipments, (raw) => {
    const shipment = shipmentSchema.safeParse(raw);
    if (!shipment.success) return 'malformed';
    const { orderNumber, trackingNumber, carrierCode, shipDate, shipmentId, voided } = shipment.data;
    return shipmentNotice({ orderNumber, trackingNumber, carrier: carrierCode, shipDate, shipmentId, voided });
  }, parsed.data);
}

/** Keeps one read's worst case known: the replay cron plans its time with it. */
export const SHIPMENT_PAGES_PER_READ = 10;
export const pageWorstCaseMs = (timeoutMs: number) => 2 * timeoutMs;

export interface UnreadPages {
  resourceUrl: string;
  page: number;
  pages: number;
  /** The pages-per-read bound, no time left in the request for another page, or this page failed (`error`). */
  reason: 'pages_per_read' | 'no_time' | 'failed';
  error?: ShipStationError;
}

export type ShipmentsResult = Pick<ShipmentsPage, 'notices' | 'voided'> & { malformed: number; unread?: UnreadPages };

export async function readBatch(
  first: URL,
  readPage: (url: URL) => Promise<ShipmentsPage & { malformed: number }>,
  timeoutMs: number,
): Promise<ShipmentsResult> {
  const result: ShipmentsResult = { notices: [], voided: 0, malformed: 0 };
  let url = first;
  let page = pageOf(url);
  let answer = await readPage(url);
  for (let read = 1; ; read += 1) {
    result.notices.push(...answer.notices);
    result.voided += answer.voided;
    result.malformed += answer.malformed;
    // An empty page ends the batch whatever `pages` says: a wrong count cannot keep the reads going.
    const shipmentsOnPage = answer.notices.length + answer.malformed + (answer.skipped ?? 0);
    if (page >= answer.pages || shipmentsOnPage === 0) return result;

    url = new URL(url);
    page += 1;
    url.searchParams.set('page', String(page));
    const rest = { resourceUrl: url.href, page, pages: answer.pages };
    const unread = (reason: UnreadPages['reason'], error?: ShipStationError): ShipmentsResult => ({
      ...result,
      unread: { ...rest, reason, ...(error ? { error } : {}) },
    });
    if (read >= SHIPMENT_PAGES_PER_READ) return unread('pages_per_read');
    // A page started without the time for its worst case could only be cut off by the deadline.
    if (requestTimeLeftMs() < pageWorstCaseMs(timeoutMs)) return unread('no_time');
    try {
      answer = await readPage(url);
    } catch (error) {
      if (error instanceof ShipStationError) return unread('failed', error);
      throw error;
    }
  }
}

function pageOf(url: URL): number {
  const raw = url.searchParams.get('page');
  return raw !== null && /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 1;
}

export class ShipStationClient {
  private readonly http: ShipStationHttp;

  constructor(
    private readonly settings: NonNullable<ReturnType<typeof shipStationSettings>>,
    options: ShipStationHttpOptions = {},
  ) {
    const authorization = `Basic ${Buffer.from(`${settings.apiKey}:${settings.apiSecret}`).toString('base64')}`;
    this.http = new ShipStationHttp(settings.timeoutMs, { Authorization: authorization }, settings.apiBaseUrl, options);
  }

  async shipmentsAt(resourceUrl: string): Promise<ShipmentsResult> {
    return readBatch(this.http.allowed(resourceUrl), (url) => this.readPage(url), this.settings.timeoutMs);
  }

  async shipmentsPage(pageUrl: string): Promise<ShipmentsPage & { malformed: number }> {
    return this.readPage(this.http.allowed(pageUrl));
  }

  private async readPage(url: URL): Promise<ShipmentsPage & { malformed: number }> {
    return parseShipmentsResponse(await this.http.getJson(url, 'get shipments'));
  }
}

export function shipStationSettings(config: Pick<Config, 'shipping' | 'upstreamTimeoutMs'>) {
  const { apiKey, apiSecret, apiBaseUrl } = config.shipping;
  if (!apiKey || !apiSecret) return undefined;
  return { apiKey, apiSecret, apiBaseUrl, timeoutMs: config.upstreamTimeoutMs };
}
