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
import { readStreamText } from '@/lib/upstream/read-stream';
import { MemoryShipStationRateBudget, type ShipStationRateBudget } from '@/lib/shared-state/shipstation-budget/rate-budget';
import { checkResourceUrl } from '@/lib/shipping/resource-url';
import { traceCall } from '@/lib/telemetry';
import {
  attemptTimeoutMs,
  MIN_ATTEMPT_MS,
  requestTimeLeftMs,
  RETRY_JITTER_MAX_MS,
  RETRY_JITTER_MIN_MS,
} from '@/lib/upstream/budget';

export interface ShipStationSettings {
  apiKey: string;
  apiSecret: string;
  apiBaseUrl: string;
  timeoutMs: number;
}

/** One shipment as the webhook use case needs it, whether it came inline or from ShipStation. */
export interface ShipmentNotice {
  orderNumber: string | undefined;
  trackingNumber: string | undefined;
  carrier: string | undefined;
  shipDate: string | undefined;
  /** ShipStation's id of this package, when the sender names it: one order may ship in several. */
  shipmentId?: string | undefined;
  /** The label was voided: noted on the order, never shipped. */
  voided?: boolean | undefined;
}

/** Shipments of one response; voided ones are kept, marked, so the order can note them (never ship them). */
export interface ShipmentsPage {
  notices: ShipmentNotice[];
  voided: number;
  page: number;
  pages: number;
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
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const MAX_ATTEMPTS = 2;

export interface ShipStationClientOptions {
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** The account's request budget; one per client in process memory when not given (lib/services.ts shares one). */
  budget?: ShipStationRateBudget;
}

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

/** The page a resource URL asks for (ShipStation's own URLs ask for none: the first). */
function pageOf(url: URL): number {
  const raw = url.searchParams.get('page');
  return raw !== null && /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 1;
}

export class ShipStationClient {
  private readonly budget: ShipStationRateBudget;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly authorization: string;

  constructor(
    private readonly settings: ShipStationSettings,
    options: ShipStationClientOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.budget = options.budget ?? new MemoryShipStationRateBudget(this.now);
    this.authorization = `Basic ${Buffer.from(`${settings.apiKey}:${settings.apiSecret}`).toString('base64')}`;
  }

  /**
   * Reads the shipments a webhook's `resource_url` names, from the page it names (the first, for
   * ShipStation's own URLs) to the last, or until it stops early (`unread`). A failure of the first
   * page is thrown: nothing was read.
   */
  async shipmentsAt(resourceUrl: string): Promise<ShipmentsResult> {
    const check = checkResourceUrl(resourceUrl, this.settings.apiBaseUrl);
    if (!check.allowed) throw new ShipStationError(check.reason, undefined, check.origin);

    const result: ShipmentsResult = { notices: [], voided: 0, malformed: 0 };
    let url = check.url;
    let page = pageOf(url);
    let answer = await this.readPage(url);
    for (let read = 1; ; read += 1) {
      result.notices.push(...answer.notices);
      result.voided += answer.voided;
      result.malformed += answer.malformed;
      // An empty page ends the batch whatever `pages` says: a wrong count cannot keep the reads going.
      const shipmentsOnPage = answer.notices.length + answer.malformed;
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
      if (requestTimeLeftMs() < pageWorstCaseMs(this.settings.timeoutMs)) return unread('no_time');
      try {
        answer = await this.readPage(url);
      } catch (error) {
        if (error instanceof ShipStationError) return unread('failed', error);
        throw error;
      }
    }
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
    return parseShipmentsResponse(await traceCall('shipstation', 'get shipments', () => this.getJson(url)));
  }

  private async getJson(url: URL): Promise<unknown> {
    // The wait for the budget counts against the same allowance as the request itself.
    const deadline = this.now() + Math.min(this.settings.timeoutMs, requestTimeLeftMs());
    // A page is a read: one more attempt after a network error, a timeout or a 5xx, when time remains.
    let retriedTransient = false;
    const retryTransient = async (): Promise<boolean> => {
      if (retriedTransient) return false;
      const pause = RETRY_JITTER_MIN_MS + Math.floor(Math.random() * (RETRY_JITTER_MAX_MS - RETRY_JITTER_MIN_MS));
      if (requestTimeLeftMs() - pause < MIN_ATTEMPT_MS) return false;
      retriedTransient = true;
      await this.sleep(pause);
      return true;
    };
    for (let attempt = 1; ; attempt += 1) {
      await this.takeBudget(deadline);
      const timeoutMs = attemptTimeoutMs(this.settings.timeoutMs);
      if (timeoutMs === 0) throw new ShipStationError('timeout', undefined);
      let response: Response;
      try {
        response = await this.fetchImpl(url, {
          method: 'GET',
          headers: { Authorization: this.authorization, Accept: 'application/json' },
          // A redirect comes back as a 3xx answer and is refused below: never followed, and
          // (unlike redirect: 'error', a network error) never mistaken for a failure worth a retry.
          redirect: 'manual',
          cache: 'no-store',
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
        if (await retryTransient()) continue;
        throw new ShipStationError(timedOut ? 'timeout' : 'unavailable', undefined);
      }

      if (response.status === 429) {
        await this.budget.throttled(response.headers);
        discard(response);
        if (attempt < MAX_ATTEMPTS) continue;
        throw new ShipStationError('rate_limited', 429);
      }
      await this.budget.observe(response.headers);
      if (!response.ok) {
        discard(response);
        if (response.status >= 500 && (await retryTransient())) continue;
        throw new ShipStationError(response.status >= 500 ? 'unavailable' : 'rejected', response.status);
      }
      return this.readJson(response);
    }
  }

  /** Waits for a request from the budget, or gives up when the wait would pass the deadline. */
  private async takeBudget(deadline: number): Promise<void> {
    for (;;) {
      const wait = await this.budget.reserve();
      if (wait === 0) return;
      if (this.now() + wait > deadline) throw new ShipStationError('rate_limited', undefined);
      await this.sleep(wait);
    }
  }

  private async readJson(response: Response): Promise<unknown> {
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
      discard(response);
      throw new ShipStationError('bad_response', response.status);
    }
    let text: string;
    try {
      text = await readLimited(response, MAX_RESPONSE_BYTES);
    } catch (error) {
      if (error instanceof ShipStationError) throw error;
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new ShipStationError(timedOut ? 'timeout' : 'unavailable', response.status);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ShipStationError('bad_response', response.status);
    }
  }
}

/** Drops a body that will not be read, without waiting on the sender. */
function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

async function readLimited(response: Response, limit: number): Promise<string> {
  const text = await readStreamText(response.body, limit);
  if (text === undefined) throw new ShipStationError('bad_response', response.status);
  return text;
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
