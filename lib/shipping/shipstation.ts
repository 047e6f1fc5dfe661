/**
 * The ShipStation client (V1 API): reads the `resource_url` of a real
 * ShipStation webhook delivery, which carries only `{resource_url, resource_type}`
 * (docs/decisions.md#d11).
 *
 * - Only URLs on SHIPSTATION_API_BASE_URL's origin are read (lib/shipping/resource-url.ts).
 * - Basic auth with the API key and secret; redirects are refused, so the
 *   credentials never follow a Location header to another host.
 * - Every attempt has the upstream timeout, cut to what the webhook request has
 *   left (lib/upstream/budget.ts); a page is read again once after a network
 *   error, a timeout or a 5xx when time remains. Requests stay within ShipStation's
 *   40 requests per minute (lib/shared-state/shipstation-budget/rate-budget.ts); a 429 is waited out
 *   once when the wait fits in the timeout.
 * - A batch is read page by page (`page` and `pages` of the answer) to its last
 *   page. One read stops after SHIPMENT_PAGES_PER_READ pages, when the request
 *   has no time left for another page, or at a page that fails, and then hands
 *   back the URL of the first page it did not read, so the caller can queue
 *   the rest: no page is ever dropped.
 * - Shipments become the service's ShipmentNotice at this boundary; failures
 *   become ShipStationError with the HTTP status only, never a body.
 */
import { z } from 'zod';
import { ShipStationError } from '@/lib/errors';
import type { ShipmentNotice } from '@/lib/shipment-notices';
import { ShipStationHttp, type ShipStationHttpOptions } from '@/lib/shipping/http';
import { checkResourceUrl } from '@/lib/shipping/resource-url';
import { traceCall } from '@/lib/telemetry';
import { requestTimeLeftMs } from '@/lib/upstream/budget';

export type { ShipmentNotice };

export interface ShipStationSettings {
  apiKey: string;
  apiSecret: string;
  apiBaseUrl: string;
  timeoutMs: number;
}

/** Shipments of one response; voided ones are kept, marked, so the order can note them (never ship them). */
export interface ShipmentsPage {
  notices: ShipmentNotice[];
  voided: number;
  page: number;
  pages: number;
  /** Listed but not shipments of an order (V2's return labels): they count as the page's content. */
  skipped?: number;
}

const optionalText = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((v) => (v === null || v === undefined ? undefined : String(v).trim().slice(0, 200) || undefined));

// Only the fields the service reads; the rest of ShipStation's shipment (addresses, label data) is dropped unread.
const shipmentSchema = z.object({
  shipmentId: optionalText,
  orderNumber: optionalText,
  trackingNumber: optionalText,
  carrierCode: optionalText,
  shipDate: optionalText,
  voided: z.boolean().nullish(),
});

const shipmentsResponseSchema = z.object({
  shipments: z.array(z.unknown()),
  page: z.number().int().nullish(),
  pages: z.number().int().nullish(),
});

/** Parses a GET /shipments response. Shipments that do not have the expected shape are skipped, not fatal. */
export function parseShipmentsResponse(data: unknown): ShipmentsPage & { malformed: number } {
  const parsed = shipmentsResponseSchema.safeParse(data);
  if (!parsed.success) throw new ShipStationError('bad_response', 200);
  const notices: ShipmentNotice[] = [];
  let voided = 0;
  let malformed = 0;
  for (const raw of parsed.data.shipments) {
    const shipment = shipmentSchema.safeParse(raw);
    if (!shipment.success) {
      malformed += 1;
      continue;
    }
    if (shipment.data.voided === true) voided += 1;
    notices.push({
      orderNumber: shipment.data.orderNumber,
      trackingNumber: shipment.data.trackingNumber,
      carrier: shipment.data.carrierCode,
      shipDate: shipment.data.shipDate,
      ...(shipment.data.shipmentId !== undefined ? { shipmentId: shipment.data.shipmentId } : {}),
      ...(shipment.data.voided === true ? { voided: true } : {}),
    });
  }
  return { notices, voided, malformed, page: parsed.data.page ?? 1, pages: parsed.data.pages ?? 1 };
}

/**
 * The most pages one read takes. A longer batch is read in several reads (the rest is handed back as
 * `unread`), which keeps the worst case of one read known: the replay cron plans its time with it.
 */
export const SHIPMENT_PAGES_PER_READ = 10;
/** A page's worst case: the wait for the rate budget and the call, each bounded by the upstream timeout. */
export const pageWorstCaseMs = (timeoutMs: number) => 2 * timeoutMs;

export type ShipStationClientOptions = ShipStationHttpOptions;

/** Where a read stopped before the batch's last page: the rest, to be read later. */
export interface UnreadPages {
  /** The first page not read: the resource URL with its `page` parameter set. */
  resourceUrl: string;
  page: number;
  /** The batch's pages, as the last page read counted them. */
  pages: number;
  /** The pages-per-read bound, no time left in the request for another page, or this page failed (`error`). */
  reason: 'pages_per_read' | 'no_time' | 'failed';
  error?: ShipStationError;
}

export interface ShipmentsResult {
  notices: ShipmentNotice[];
  voided: number;
  malformed: number;
  /** Set when the batch was not read to its last page. */
  unread?: UnreadPages;
}

/**
 * Reads a batch from the page its URL names to the last (`page`/`pages` of each answer, V1's and
 * V2's alike), or until it stops early (`unread`). A failure of the first page is thrown.
 */
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

/** The page a resource URL asks for (ShipStation's own URLs ask for none: the first). */
function pageOf(url: URL): number {
  const raw = url.searchParams.get('page');
  return raw !== null && /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 1;
}

export class ShipStationClient {
  private readonly http: ShipStationHttp;

  constructor(
    private readonly settings: ShipStationSettings,
    options: ShipStationClientOptions = {},
  ) {
    const authorization = `Basic ${Buffer.from(`${settings.apiKey}:${settings.apiSecret}`).toString('base64')}`;
    this.http = new ShipStationHttp(settings.timeoutMs, { Authorization: authorization }, options);
  }

  /**
   * Reads the shipments a webhook's `resource_url` names, from the page it names (the first, for
   * ShipStation's own URLs) to the last, or until it stops early (`unread`). A failure of the first
   * page is thrown: nothing was read.
   */
  async shipmentsAt(resourceUrl: string): Promise<ShipmentsResult> {
    const check = checkResourceUrl(resourceUrl, this.settings.apiBaseUrl);
    if (!check.allowed) throw new ShipStationError(check.reason, undefined, check.origin);

    return readBatch(check.url, (url) => this.readPage(url), this.settings.timeoutMs);
  }

  /**
   * One page of shipments, exactly the one the URL names: for a caller that keeps its own place
   * between pages (shipment reconciliation). Same origin check, budget and retries as shipmentsAt.
   */
  async shipmentsPage(pageUrl: string): Promise<ShipmentsPage & { malformed: number }> {
    const check = checkResourceUrl(pageUrl, this.settings.apiBaseUrl);
    if (!check.allowed) throw new ShipStationError(check.reason, undefined, check.origin);
    return this.readPage(check.url);
  }

  private async readPage(url: URL): Promise<ShipmentsPage & { malformed: number }> {
    return parseShipmentsResponse(await traceCall('shipstation', 'get shipments', () => this.http.getJson(url)));
  }
}

/** The client's settings when both ShipStation credentials are configured, else undefined. */
export function shipStationSettings(config: {
  shipping: { apiKey: string | undefined; apiSecret: string | undefined; apiBaseUrl: string };
  upstreamTimeoutMs: number;
}): ShipStationSettings | undefined {
  const { apiKey, apiSecret, apiBaseUrl } = config.shipping;
  if (!apiKey || !apiSecret) return undefined;
  return { apiKey, apiSecret, apiBaseUrl, timeoutMs: config.upstreamTimeoutMs };
}
