/**
 * ShipStation V2 (api.shipstation.com) as the service meets it, from ShipStation's V2 docs:
 * - its deliveries, signed RSA-SHA256 (base64) over `<timestamp>.<raw body>` with a key pair this
 *   stand-in generates, the headers `x-shipengine-rsa-sha256-key-id`, `-signature` and
 *   `x-shipengine-timestamp` (ISO 8601), the public key published as a JWKS at `/jwks`;
 * - GET /v2/labels (filters `batch_id`, `created_at_start`/`_end`, `sort_dir`; `page`, `page_size`
 *   25 by default; `{labels, total, page, pages, links}`), GET /v2/labels/{id},
 *   GET /v2/shipments/{id} (`shipment_number`), GET /v2/fulfillments (`create_date_start`/`_end`),
 *   each with the `api-key` header (401 without), 200 requests a minute, then 429 with Retry-After.
 * One fetch handler, mounted by msw in the route tests and served on loopback by the demo.
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { FetchHandler } from '../loopback-http';

export const V2_STAND_IN_API_KEY = 'TEST_v2_api_key_5f1c0e';
const PER_MINUTE = 200;

export interface V2LabelInput {
  orderNumber: string;
  trackingNumber: string;
  carrierCode?: string;
  shipDate?: string;
  voided?: boolean;
  isReturnLabel?: boolean;
  batchId?: string;
  /** When the label was created (ISO 8601); now when not given. */
  createdAt?: string;
}

export interface V2FulfillmentInput {
  orderNumber: string;
  trackingNumber: string;
  carrier?: string;
  shipDate?: string;
  voided?: boolean;
  createdAt?: string;
}

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

function newKey(): SigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = `se-key-${randomBytes(4).toString('hex')}`;
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

export interface V2Call {
  method: string;
  url: string;
  apiKey: string | null;
}

export class ShipStationV2Model {
  readonly labels: Record<string, unknown>[] = [];
  readonly fulfillments: Record<string, unknown>[] = [];
  readonly shipments = new Map<string, Record<string, unknown>>();
  /** Each label's tracking as GET /v2/labels/{id}/track answers it; `IT` (in transit) until set. */
  readonly tracking = new Map<string, { statusCode: string; deliveredAt: string | null }>();
  readonly calls: V2Call[] = [];
  /** Keys in the JWKS; the first one signs. */
  keys: SigningKey[] = [newKey()];
  jwksReads = 0;
  private ids = 1000;
  private windowStart = 0;
  private used = 0;
  private readonly throttles: number[] = [];
  private readonly failures: { status: number; path?: RegExp }[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  reset(): void {
    this.labels.length = 0;
    this.fulfillments.length = 0;
    this.shipments.clear();
    this.tracking.clear();
    this.calls.length = 0;
    this.keys = [this.keys[0] ?? newKey()];
    this.jwksReads = 0;
    this.used = 0;
    this.throttles.length = 0;
    this.failures.length = 0;
  }

  private id(): string {
    this.ids += 1;
    return `se-${this.ids}`;
  }

  /** The V2 shipment of an order number: one per order (a V1 order is a V2 shipment). */
  shipmentFor(orderNumber: string): string {
    for (const [id, shipment] of this.shipments) if (shipment.shipment_number === orderNumber) return id;
    const id = this.id();
    this.shipments.set(id, { shipment_id: id, shipment_number: orderNumber, shipment_status: 'label_purchased', external_order_id: orderNumber });
    return id;
  }

  addLabel(input: V2LabelInput): Record<string, unknown> {
    const label = {
      label_id: this.id(),
      status: input.voided ? 'voided' : 'completed',
      shipment_id: this.shipmentFor(input.orderNumber),
      batch_id: input.batchId ?? '',
      ship_date: input.shipDate ?? new Date(this.now()).toISOString(),
      created_at: input.createdAt ?? new Date(this.now()).toISOString(),
      shipment_cost: { currency: 'usd', amount: 7.65 },
      tracking_number: input.trackingNumber,
      is_return_label: input.isReturnLabel ?? false,
      is_international: false,
      carrier_id: 'se-28529731',
      service_code: 'usps_priority_mail',
      carrier_code: input.carrierCode ?? 'stamps_com',
      voided: input.voided ?? false,
      voided_at: input.voided ? new Date(this.now()).toISOString() : null,
      tracking_status: 'in_transit',
      label_download: { href: 'https://api.shipstation.com/v2/downloads/1/label.pdf' },
    };
    this.labels.push(label);
    return label;
  }

  /** Labels of one batch and the LABEL_CREATED_V2 `resource_url` naming them. */
  addBatch(batchId: string, labels: Omit<V2LabelInput, 'batchId'>[], baseUrl: string): string {
    for (const label of labels) this.addLabel({ ...label, batchId });
    return `${baseUrl}/v2/labels?batch_id=${batchId}`;
  }

  addFulfillment(input: V2FulfillmentInput): Record<string, unknown> {
    const fulfillment = {
      fulfillment_id: this.id(),
      shipment_id: this.shipmentFor(input.orderNumber),
      shipment_number: input.orderNumber,
      user_id: 'a1b2c3d4-0000-4000-8000-000000000001',
      tracking_number: input.trackingNumber,
      created_at: input.createdAt ?? new Date(this.now()).toISOString(),
      ship_date: input.shipDate ?? new Date(this.now()).toISOString(),
      voided_at: input.voided ? new Date(this.now()).toISOString() : null,
      delivered_at: null,
      fulfillment_carrier_friendly_name: input.carrier ?? 'FedEx',
      fulfillment_provider_code: 'external',
      void_requested: false,
      voided: input.voided ?? false,
      order_source_notified: true,
    };
    this.fulfillments.push(fulfillment);
    return fulfillment;
  }

  /** The next request is answered 429 with this Retry-After, whatever the budget says. */
  throttleNext(retryAfterSeconds: number): void {
    this.throttles.push(retryAfterSeconds);
  }

  /** The next API requests are answered with these statuses (ShipStation down: 500, 503), once each. */
  failNext(...statuses: number[]): void {
    this.failures.push(...statuses.map((status) => ({ status })));
  }

  /** The same, for the next requests whose path matches only. */
  failPath(path: RegExp, ...statuses: number[]): void {
    this.failures.push(...statuses.map((status) => ({ status, path })));
  }

  /** A new signing key: deliveries are signed with it from now on, and the JWKS lists it first. */
  rotateKey(): string {
    const key = newKey();
    this.keys.unshift(key);
    return key.kid;
  }

  jwks(): { keys: Record<string, unknown>[] } {
    return { keys: [...this.keys.map((key) => key.jwk), { kty: 'EC', crv: 'P-256', kid: 'se-ec-1', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] };
  }

  /** A delivery as ShipStation posts it: the raw body and its three signature headers. */
  delivery(payload: object, options: { timestamp?: string; key?: SigningKey } = {}): { body: string; headers: Record<string, string> } {
    const body = JSON.stringify(payload);
    const timestamp = options.timestamp ?? new Date(this.now()).toISOString();
    const key = options.key ?? (this.keys[0] as SigningKey);
    const signature = sign('RSA-SHA256', Buffer.from(`${timestamp}.${body}`, 'utf8'), key.privateKey).toString('base64');
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-shipengine-rsa-sha256-key-id': key.kid,
        'x-shipengine-rsa-sha256-signature': signature,
        'x-shipengine-timestamp': timestamp,
      },
    };
  }

  /** Signed with a key the JWKS does not list (a forger's, or one not published yet). */
  foreignKey(): SigningKey {
    return newKey();
  }

  /** Counts a request against the minute's 200; the seconds to wait when over. */
  private take(): number | undefined {
    const forced = this.throttles.shift();
    if (forced !== undefined) return forced;
    const now = this.now();
    if (now - this.windowStart >= 60_000) {
      this.windowStart = now;
      this.used = 0;
    }
    if (this.used >= PER_MINUTE) return Math.max(1, Math.ceil((this.windowStart + 60_000 - now) / 1000));
    this.used += 1;
    return undefined;
  }

  private page(rows: Record<string, unknown>[], url: URL): Response {
    const page = Math.max(1, Number(url.searchParams.get('page') ?? '1') || 1);
    const size = Math.min(Math.max(1, Number(url.searchParams.get('page_size') ?? '25') || 25), 500);
    const pages = Math.max(1, Math.ceil(rows.length / size));
    const link = (n: number) => {
      const u = new URL(url);
      u.searchParams.set('page', String(n));
      return { href: u.href };
    };
    const key = url.pathname.endsWith('/fulfillments') ? 'fulfillments' : 'labels';
    return Response.json({
      [key]: rows.slice((page - 1) * size, page * size),
      total: rows.length,
      page,
      pages,
      links: { first: link(1), last: link(pages), prev: page > 1 ? link(page - 1) : {}, next: page < pages ? link(page + 1) : {} },
    });
  }

  private listed(rows: Record<string, unknown>[], url: URL, from: string, to: string): Record<string, unknown>[] {
    const start = url.searchParams.get(from);
    const end = url.searchParams.get(to);
    const asc = url.searchParams.get('sort_dir') === 'asc';
    return rows
      .filter((r) => (start === null || Date.parse(String(r.created_at)) >= Date.parse(start)) && (end === null || Date.parse(String(r.created_at)) <= Date.parse(end)))
      .sort((a, b) => (asc ? 1 : -1) * (Date.parse(String(a.created_at)) - Date.parse(String(b.created_at))));
  }

  readonly handler: FetchHandler = async (request) => {
    const url = new URL(request.url);
    this.calls.push({ method: request.method, url: request.url, apiKey: request.headers.get('api-key') });
    if (url.pathname === '/jwks') {
      this.jwksReads += 1;
      return Response.json(this.jwks());
    }
    if (request.method !== 'GET') return Response.json({ errors: [{ message: 'not supported by the stand-in' }] }, { status: 405 });
    if (request.headers.get('api-key') !== V2_STAND_IN_API_KEY) {
      return Response.json({ request_id: randomBytes(8).toString('hex'), errors: [{ error_source: 'shipstation', error_type: 'security', error_code: 'unauthorized', message: 'The API key is invalid.' }] }, { status: 401 });
    }
    const index = this.failures.findIndex((f) => f.path === undefined || f.path.test(url.pathname));
    const failure = index === -1 ? undefined : this.failures.splice(index, 1)[0]?.status;
    if (failure !== undefined) return Response.json({ errors: [{ error_source: 'shipstation', error_type: 'system', error_code: 'unspecified', message: 'Service unavailable.' }] }, { status: failure });
    const wait = this.take();
    if (wait !== undefined) {
      return Response.json({ errors: [{ error_source: 'shipstation', error_type: 'system', error_code: 'rate_limit_exceeded', message: 'You have exceeded the rate limit.' }] }, { status: 429, headers: { 'Retry-After': String(wait) } });
    }
    const notFound = () => Response.json({ errors: [{ error_source: 'shipstation', error_type: 'validation', error_code: 'not_found', message: 'Not found.' }] }, { status: 404 });
    if (url.pathname === '/v2/labels') {
      const batch = url.searchParams.get('batch_id');
      const rows = this.listed(this.labels, url, 'created_at_start', 'created_at_end').filter((l) => batch === null || l.batch_id === batch);
      return this.page(rows, url);
    }
    if (url.pathname === '/v2/fulfillments') return this.page(this.listed(this.fulfillments, url, 'create_date_start', 'create_date_end'), url);
    const track = /^\/v2\/labels\/([^/]+)\/track$/.exec(url.pathname);
    if (track) {
      const found = this.labels.find((l) => l.label_id === decodeURIComponent(track[1] ?? ''));
      if (!found) return notFound();
      const state = this.tracking.get(String(found.label_id)) ?? { statusCode: 'IT', deliveredAt: null };
      return Response.json({
        tracking_number: found.tracking_number,
        status_code: state.statusCode,
        status_description: state.statusCode === 'DE' ? 'Delivered' : 'In Transit',
        carrier_code: found.carrier_code,
        ship_date: found.ship_date,
        actual_delivery_date: state.deliveredAt,
        events: [],
      });
    }
    const label = /^\/v2\/labels\/([^/]+)$/.exec(url.pathname);
    if (label) {
      const found = this.labels.find((l) => l.label_id === decodeURIComponent(label[1] ?? ''));
      return found ? Response.json(found) : notFound();
    }
    const shipment = /^\/v2\/shipments\/([^/]+)$/.exec(url.pathname);
    if (shipment) {
      const found = this.shipments.get(decodeURIComponent(shipment[1] ?? ''));
      return found ? Response.json(found) : notFound();
    }
    return notFound();
  };
}

/** TRACK_EVENT_V2 as ShipStation's payload schema shows it, for a label and a status code (what GET …/track then answers too). */
export function trackEvent(baseUrl: string, label: Record<string, unknown>, statusCode: string, deliveredAt = new Date().toISOString()) {
  return {
    resource_url: `${baseUrl}/v2/labels/${String(label.label_id)}/track`,
    resource_type: 'TRACK_EVENT_V2',
    data: {
      tracking_number: label.tracking_number,
      status_code: statusCode,
      status_description: statusCode === 'DE' ? 'Delivered' : 'In Transit',
      carrier_code: label.carrier_code,
      ship_date: label.ship_date,
      estimated_delivery_date: null,
      actual_delivery_date: statusCode === 'DE' ? deliveredAt : null,
      events: [],
    },
  };
}
