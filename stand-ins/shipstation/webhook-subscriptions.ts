/**
 * ShipStation's webhook management APIs in memory, as one fetch handler:
 * V1 (ssapi.shipstation.com, Basic key:secret): GET /webhooks, POST /webhooks/subscribe, DELETE /webhooks/<id>;
 * V2 (api.shipstation.com, `api-key` header): GET | POST /v2/environment/webhooks, GET | PUT | DELETE /v2/environment/webhooks/<id>.
 * Shapes from ShipStation's V1 and V2 references: V1 lists `{webhooks: [{WebHookID, HookType, Url, Name, Active, StoreID, …}]}`;
 * V2 lists an array of `{webhook_id, url, event, headers, name}`, and answers an update or a delete 204.
 * Not part of the production bundle.
 */
import type { FetchHandler } from '../loopback-http';

export const V1_EVENTS = ['ORDER_NOTIFY', 'ITEM_ORDER_NOTIFY', 'SHIP_NOTIFY', 'ITEM_SHIP_NOTIFY', 'FULFILLMENT_SHIPPED', 'FULFILLMENT_REJECTED'] as const;
export const V2_EVENTS = [
  'batch',
  'carrier_connected',
  'order_source_refresh_complete',
  'rate',
  'report_complete',
  'sales_orders_imported',
  'track',
  'batch_processed_v2',
  'fulfillment_rejected_v2',
  'fulfillment_shipped_v2',
  'label_created_v2',
  'shipment_created_v2',
  'track_event_v2',
] as const;

export interface V1Webhook {
  IsLabelAPIHook: boolean;
  WebHookID: number;
  SellerID: number;
  StoreID: number | null;
  HookType: string;
  MessageFormat: 'Json';
  Url: string;
  Name: string;
  BulkCopyBatchID: null;
  BulkCopyRecordID: null;
  Active: boolean;
  WebhookLogs: unknown[];
  Seller: null;
  Store: null;
}

export interface V2Webhook {
  webhook_id: string;
  url: string;
  event: string;
  name: string;
  headers: { key: string; value: string }[];
}

export class ShipStationWebhookSubscriptions {
  readonly v1 = new Map<number, V1Webhook>();
  readonly v2 = new Map<string, V2Webhook>();
  private sequence = 0;

  /** Test control: a V1 webhook added in ShipStation's settings. */
  seedV1(fields: Partial<V1Webhook> & { Url: string; HookType: string }): V1Webhook {
    this.sequence += 1;
    const hook: V1Webhook = {
      IsLabelAPIHook: false,
      WebHookID: 100_000 + this.sequence,
      SellerID: 1,
      StoreID: null,
      MessageFormat: 'Json',
      Name: 'Webhook',
      BulkCopyBatchID: null,
      BulkCopyRecordID: null,
      Active: true,
      WebhookLogs: [],
      Seller: null,
      Store: null,
      ...fields,
    };
    this.v1.set(hook.WebHookID, hook);
    return structuredClone(hook);
  }

  /** Test control: a V2 webhook added in ShipStation's settings. */
  seedV2(fields: { url: string; event: string; name?: string }): V2Webhook {
    this.sequence += 1;
    const hook: V2Webhook = { webhook_id: `se-${200_000 + this.sequence}`, name: fields.name ?? 'Webhook', headers: [], ...fields };
    this.v2.set(hook.webhook_id, hook);
    return structuredClone(hook);
  }
}

export interface SubscriptionCredentials {
  v1?: { apiKey: string; apiSecret: string };
  v2ApiKey?: string;
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function v2Error(status: number, message: string, code = 'invalid_field_value'): Response {
  return json(status, {
    request_id: crypto.randomUUID(),
    errors: [{ error_source: 'shipengine', error_type: status === 401 ? 'security' : 'validation', error_code: code, message }],
  });
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

async function jsonBody(request: Request): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed: unknown = await request.json();
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Answers the webhook management routes of both APIs; undefined for any other path, so it can sit beside the other ShipStation handlers. */
export function shipStationSubscriptionsHandler(
  model: ShipStationWebhookSubscriptions,
  credentials: SubscriptionCredentials,
): (request: Request) => Promise<Response | undefined> {
  return async (request) => {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    const method = request.method.toUpperCase();

    const v1Route = /^\/webhooks(?:\/(subscribe|\d+))?$/.exec(path);
    if (v1Route) {
      const expected = credentials.v1 ? `Basic ${Buffer.from(`${credentials.v1.apiKey}:${credentials.v1.apiSecret}`).toString('base64')}` : undefined;
      if (!expected || request.headers.get('authorization') !== expected) return json(401, { message: 'Invalid API credentials' });
      const target = v1Route[1];
      if (target === undefined && method === 'GET') return json(200, { webhooks: structuredClone([...model.v1.values()]) });
      if (target === 'subscribe' && method === 'POST') {
        const body = await jsonBody(request);
        if (!body || !isHttpUrl(body.target_url) || !(V1_EVENTS as readonly unknown[]).includes(body.event)) {
          return json(400, { message: 'Invalid request parameters' });
        }
        const hook = model.seedV1({
          Url: body.target_url,
          HookType: body.event as string,
          Name: typeof body.friendly_name === 'string' ? body.friendly_name : 'Webhook',
          StoreID: typeof body.store_id === 'number' ? body.store_id : null,
        });
        return json(200, { WebHookID: hook.WebHookID, HookType: hook.HookType, Url: hook.Url, Name: hook.Name });
      }
      if (target !== undefined && /^\d+$/.test(target) && method === 'DELETE') {
        if (!model.v1.delete(Number(target))) return json(404, { message: 'Webhook not found' });
        return new Response(null, { status: 200 });
      }
      return json(405, { message: 'The requested resource does not support http method' });
    }

    const v2Route = /^\/v2\/environment\/webhooks(?:\/([^/]+))?$/.exec(path);
    if (v2Route) {
      if (!credentials.v2ApiKey || request.headers.get('api-key') !== credentials.v2ApiKey) {
        return v2Error(401, 'The API key is invalid. Please see https://www.shipstation.com/docs/api/', 'unauthorized');
      }
      const id = v2Route[1] === undefined ? undefined : decodeURIComponent(v2Route[1]);
      if (id === undefined && method === 'GET') return json(200, structuredClone([...model.v2.values()]));
      if (id === undefined && method === 'POST') {
        const body = await jsonBody(request);
        if (!body || typeof body.name !== 'string' || !isHttpUrl(body.url) || !(V2_EVENTS as readonly unknown[]).includes(body.event)) {
          return v2Error(400, 'Request body is invalid: name, event and url are required');
        }
        return json(200, model.seedV2({ url: body.url, event: body.event as string, name: body.name }));
      }
      const hook = id === undefined ? undefined : model.v2.get(id);
      if (!hook) return v2Error(404, 'webhook not found', 'not_found');
      if (method === 'GET') return json(200, structuredClone(hook));
      if (method === 'PUT') {
        const body = await jsonBody(request);
        if (!body || (body.url !== undefined && !isHttpUrl(body.url))) return v2Error(400, 'url is invalid');
        if (typeof body.url === 'string') hook.url = body.url;
        if (typeof body.name === 'string') hook.name = body.name;
        return new Response(null, { status: 204 });
      }
      if (method === 'DELETE') {
        model.v2.delete(hook.webhook_id);
        return new Response(null, { status: 204 });
      }
    }
    return undefined;
  };
}

/** The same routes as a fetch handler of their own (404 for any other path). */
export function shipStationSubscriptionsFetchHandler(model: ShipStationWebhookSubscriptions, credentials: SubscriptionCredentials): FetchHandler {
  const handler = shipStationSubscriptionsHandler(model, credentials);
  return async (request) => (await handler(request)) ?? json(404, { message: 'Not found' });
}
