/**
 * A ShipStation V1 stand-in for route tests: GET /shipments answers in the
 * shape ShipStation documents (shipments[] with orderNumber, trackingNumber,
 * carrierCode, shipDate, voided, … plus total/page/pages) and carries the
 * X-Rate-Limit-Limit/-Remaining/-Reset headers of its 40 requests per minute.
 *
 * `useShippingProviders()` installs the WooCommerce/Stripe handlers of
 * providers.ts plus this stand-in on one msw server, and records the URL of
 * every outgoing request, so a test can prove a URL was never fetched.
 */
import { delay, http, HttpResponse } from 'msw';
import { beforeAll, beforeEach, afterAll, afterEach } from 'vitest';
import { ShipStationV2Model, V2_STAND_IN_API_KEY } from '@/stand-ins/shipstation/v2';
import { createProviders, type Providers } from './providers';

export const SHIPSTATION_BASE_URL = 'https://ssapi.shipstation.com';
export const TEST_SHIPSTATION_KEY = 'test-shipstation-api-key-7d41';
export const TEST_SHIPSTATION_SECRET = 'test-shipstation-api-secret-93be';
export const SHIPSTATION_ENV = {
  SHIPSTATION_API_KEY: TEST_SHIPSTATION_KEY,
  SHIPSTATION_API_SECRET: TEST_SHIPSTATION_SECRET,
};

export interface StandInShipment {
  orderNumber: string;
  trackingNumber: string | null;
  carrierCode: string | null;
  shipDate: string | null;
  voided?: boolean;
  /** When the label was created (ShipStation's `createDate`, no offset); a fixed date when not given. */
  createDate?: string;
}

let shipmentIds = 72_000_000;

/** One shipment as ShipStation's List Shipments returns it (all fields of the documented model, fake values). */
export function recordedShipment(shipment: StandInShipment): Record<string, unknown> {
  shipmentIds += 1;
  return {
    shipmentId: shipmentIds,
    orderId: 94_000_000 + Number(shipment.orderNumber.replace(/\D/g, '') || 0),
    orderKey: `wc_order_${shipment.orderNumber}`,
    userId: '1a2b3c4d-0000-4000-8000-0000000000aa',
    customerEmail: 'customer@example.test',
    orderNumber: shipment.orderNumber,
    createDate: shipment.createDate ?? '2026-05-01T09:12:44.5230000',
    shipDate: shipment.shipDate,
    shipmentCost: 7.65,
    insuranceCost: 0,
    trackingNumber: shipment.trackingNumber,
    isReturnLabel: false,
    batchNumber: '100301',
    carrierCode: shipment.carrierCode,
    serviceCode: 'usps_priority_mail',
    packageCode: 'package',
    confirmation: 'delivery',
    warehouseId: 55_001,
    voided: shipment.voided ?? false,
    voidDate: shipment.voided ? '2026-05-01T10:02:11.0000000' : null,
    marketplaceNotified: true,
    notifyErrorMessage: null,
    shipTo: {
      name: 'Test Customer',
      company: null,
      street1: '1 Test Street',
      street2: '',
      street3: null,
      city: 'Testville',
      state: 'TX',
      postalCode: '78701',
      country: 'US',
      phone: null,
      residential: null,
      addressVerified: null,
    },
    weight: { value: 16, units: 'ounces', WeightUnits: 1 },
    dimensions: null,
    insuranceOptions: { provider: null, insureShipment: false, insuredValue: 0 },
    advancedOptions: { billToParty: null, billToAccount: null, billToPostalCode: null, billToCountryCode: null, storeId: 311_001 },
    shipmentItems: null,
    labelData: null,
    formData: null,
  };
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON, unless `text` is given. */
  body?: unknown;
  /** Sent as is (an HTML error page, JSON cut short), as text/html unless a Content-Type header says otherwise. */
  text?: string;
  delayMs?: number;
  /** Only a request for this page (the `page` parameter, 1 when absent) gets this answer. */
  page?: number;
}

export interface ShipStationCall {
  url: string;
  authorization: string | null;
}

export class ShipStationStandIn {
  /** Shipments by batch id (the `batchId` query parameter of SHIP_NOTIFY resource URLs). */
  readonly batches = new Map<string, Record<string, unknown>[]>();
  /** What List Shipments without a `batchId` lists: every shipment of the account (addShipments). */
  readonly account: Record<string, unknown>[] = [];
  readonly calls: ShipStationCall[] = [];
  pageSize = 100;
  remaining = 40;
  resetSeconds = 42;
  /** Called with the page of every request before it is answered: a test moves a fake clock here, as if ShipStation were slow. */
  beforeAnswer: ((page: number) => void) | undefined;
  private readonly queued: Answer[] = [];

  reset(): void {
    this.batches.clear();
    this.account.length = 0;
    this.calls.length = 0;
    this.queued.length = 0;
    this.pageSize = 100;
    this.remaining = 40;
    this.resetSeconds = 42;
    this.beforeAnswer = undefined;
  }

  addBatch(batchId: string, shipments: StandInShipment[]): string {
    this.batches.set(batchId, shipments.map(recordedShipment));
    return `${SHIPSTATION_BASE_URL}/shipments?batchId=${batchId}&includeShipmentItems=False`;
  }

  /** Shipments of the account, listed by a List Shipments call with date filters and no `batchId`. */
  addShipments(shipments: StandInShipment[]): void {
    this.account.push(...shipments.map(recordedShipment));
  }

  /**
   * A List Shipments query without `batchId`: the account's shipments created within
   * createDateStart..createDateEnd, by sortBy (ShipDate or CreateDate, then shipment id) and sortDir.
   * Dates without an offset are read as UTC.
   */
  private listed(url: URL): Record<string, unknown>[] {
    const time = (value: unknown) => (typeof value === 'string' ? Date.parse(/Z|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`) : NaN);
    const from = url.searchParams.get('createDateStart');
    const to = url.searchParams.get('createDateEnd');
    const key = url.searchParams.get('sortBy') === 'CreateDate' ? 'createDate' : 'shipDate';
    const direction = url.searchParams.get('sortDir') === 'DESC' ? -1 : 1;
    return this.account
      .filter((s) => (from === null || time(s.createDate) >= time(from)) && (to === null || time(s.createDate) <= time(to)))
      .sort((a, b) => direction * (String(a[key]).localeCompare(String(b[key])) || Number(a.shipmentId) - Number(b.shipmentId)));
  }

  /** The next requests (of the page an answer names, if it names one) get these answers instead of the model's, once each, in order. */
  answerNext(...answers: Answer[]): void {
    this.queued.push(...answers);
  }

  private rateHeaders(): Record<string, string> {
    return {
      'X-Rate-Limit-Limit': '40',
      'X-Rate-Limit-Remaining': String(this.remaining),
      'X-Rate-Limit-Reset': String(this.resetSeconds),
    };
  }

  readonly handlers = [
    http.get(`${SHIPSTATION_BASE_URL}/shipments`, async ({ request }) => {
      this.calls.push({ url: request.url, authorization: request.headers.get('authorization') });
      const requestedPage = Number(new URL(request.url).searchParams.get('page') ?? '1');
      this.beforeAnswer?.(requestedPage);
      const index = this.queued.findIndex((answer) => answer.page === undefined || answer.page === requestedPage);
      const queued = index === -1 ? undefined : this.queued.splice(index, 1)[0];
      if (queued) {
        if (queued.delayMs) await delay(queued.delayMs);
        const headers = { ...this.rateHeaders(), ...queued.headers };
        if (queued.text !== undefined) {
          return new HttpResponse(queued.text, { status: queued.status, headers: { 'Content-Type': 'text/html', ...headers } });
        }
        return HttpResponse.json((queued.body ?? {}) as Record<string, unknown>, { status: queued.status, headers });
      }
      const expected = `Basic ${Buffer.from(`${TEST_SHIPSTATION_KEY}:${TEST_SHIPSTATION_SECRET}`).toString('base64')}`;
      if (request.headers.get('authorization') !== expected) {
        return HttpResponse.json({ Message: 'Authorization has been denied for this request.' }, { status: 401 });
      }
      if (this.remaining <= 0) {
        return HttpResponse.json({ message: 'Too Many Requests' }, { status: 429, headers: this.rateHeaders() });
      }
      this.remaining -= 1;
      const url = new URL(request.url);
      const batchId = url.searchParams.get('batchId');
      const all = batchId === null ? this.listed(url) : (this.batches.get(batchId) ?? []);
      const page = Number(url.searchParams.get('page') ?? '1');
      // `pageSize` is the largest page this stand-in serves; a smaller one asked for is honoured.
      const size = Math.min(Number(url.searchParams.get('pageSize')) || this.pageSize, this.pageSize);
      const pages = Math.max(1, Math.ceil(all.length / size));
      const shipments = all.slice((page - 1) * size, page * size);
      return HttpResponse.json({ shipments, total: all.length, page, pages }, { headers: this.rateHeaders() });
    }),
  ];
}

export const SHIPSTATION_V2_BASE_URL = 'https://api.shipstation.com';
/** The default SHIPSTATION_V2_JWKS_URL, where the V2 stand-in's JWKS is mounted. */
export const SHIPSTATION_V2_JWKS_URL = 'https://api.shipengine.com/jwks';
export const SHIPSTATION_V2_ENV = { SHIPSTATION_V2_API_KEY: V2_STAND_IN_API_KEY };

export interface ShippingProviders {
  providers: Providers;
  shipStation: ShipStationStandIn;
  /** The V2 stand-in (stand-ins/shipstation/v2.ts) on api.shipstation.com, its JWKS on api.shipengine.com. */
  shipStationV2: ShipStationV2Model;
  /** URL of every request that left the service in this test, to any host. */
  outgoing: string[];
  /** The msw server, for a test's own one-off handlers. */
  server: ReturnType<typeof createProviders>['server'];
}

/** providers.ts's store and card models (with `shipped` and `awaiting_shipment` registered) plus the ShipStation stand-in, fresh for every test. */
export function useShippingProviders(): ShippingProviders {
  const { providers, server } = createProviders();
  const state: ShippingProviders = { providers, shipStation: new ShipStationStandIn(), shipStationV2: new ShipStationV2Model(), outgoing: [], server };
  const v2 = ({ request }: { request: Request }) => state.shipStationV2.handler(request);
  beforeAll(() => {
    server.events.on('request:start', ({ request }) => {
      state.outgoing.push(request.url);
    });
    server.listen({ onUnhandledRequest: 'error' });
  });
  beforeEach(() => {
    providers.reset({ customStatuses: ['shipped', 'awaiting_shipment'] });
    state.shipStation.reset();
    state.shipStationV2.reset();
    state.outgoing.length = 0;
    server.use(...state.shipStation.handlers, http.get(SHIPSTATION_V2_JWKS_URL, v2), http.get(`${SHIPSTATION_V2_BASE_URL}/*`, v2));
  });
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return state;
}
