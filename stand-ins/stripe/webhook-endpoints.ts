/**
 * Stripe's webhook endpoints API in memory (docs.stripe.com/api/webhook_endpoints): create, list
 * (newest first, `limit`/`starting_after`), retrieve, update and delete. As Stripe: the signing
 * `secret` is in the create answer only, `api_version` is fixed at creation (an update naming it
 * is refused as an unknown parameter), and an endpoint created without one follows the account's default (null).
 * Not part of the production bundle.
 */
import { randomBytes } from 'node:crypto';
import { StripeApiError } from './objects';

export interface StripeWebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  api_version: string | null;
  application: null;
  created: number;
  description: string | null;
  enabled_events: string[];
  livemode: false;
  metadata: Record<string, string>;
  status: 'enabled' | 'disabled';
  url: string;
}

type Params = Record<string, unknown>;

const UPDATABLE = new Set(['url', 'enabled_events', 'disabled', 'description', 'metadata', 'expand']);
const CREATABLE = new Set(['url', 'enabled_events', 'api_version', 'connect', 'description', 'metadata', 'expand']);

function invalid(message: string, param?: string, code = 'parameter_invalid'): StripeApiError {
  return new StripeApiError(400, 'invalid_request_error', code, message, param);
}

/** `enabled_events[0]=a&enabled_events[1]=b` arrives as `{0: 'a', 1: 'b'}` (the SDK's array encoding). */
function eventList(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : [];
  if (list.length === 0 || !list.every((v) => typeof v === 'string' && /^(\*|[a-z_.]{3,100})$/.test(v))) {
    throw invalid('Invalid array', 'enabled_events');
  }
  return [...new Set(list as string[])];
}

function webhookUrl(value: unknown): string {
  if (typeof value !== 'string') throw invalid('Missing required param: url.', 'url', 'parameter_missing');
  try {
    const url = new URL(value);
    if (url.protocol === 'https:' || url.protocol === 'http:') return value;
  } catch {
    // Falls through to Stripe's answer.
  }
  throw invalid('Invalid URL: URL must be publicly accessible.', 'url', 'url_invalid');
}

function unknownParameter(params: Params, allowed: Set<string>): void {
  const unknown = Object.keys(params).find((key) => !allowed.has(key));
  if (unknown) throw invalid(`Received unknown parameter: ${unknown}`, unknown, 'parameter_unknown');
}

function mergeMetadata(current: Record<string, string>, value: unknown): Record<string, string> {
  if (value === '') return {};
  if (!value || typeof value !== 'object') return current;
  const next = { ...current };
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    if (entry === '') delete next[key];
    else next[key] = String(entry);
  }
  return next;
}

export class StripeWebhookEndpoints {
  private readonly endpoints = new Map<string, StripeWebhookEndpoint>();
  private readonly secrets = new Map<string, string>();
  private sequence = 0;

  private notFound(id: string): StripeApiError {
    return new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such webhook endpoint: '${id}'`, 'id');
  }

  private newId(): string {
    this.sequence += 1;
    return `we_${this.sequence.toString().padStart(6, '0')}${randomBytes(6).toString('hex')}`;
  }

  create(params: Params): StripeWebhookEndpoint & { secret: string } {
    unknownParameter(params, CREATABLE);
    const endpoint: StripeWebhookEndpoint = {
      id: this.newId(),
      object: 'webhook_endpoint',
      api_version: typeof params.api_version === 'string' ? params.api_version : null,
      application: null,
      // Later endpoints sort first even within one second.
      created: Math.floor(Date.now() / 1000) + this.sequence,
      description: typeof params.description === 'string' && params.description !== '' ? params.description : null,
      enabled_events: eventList(params.enabled_events),
      livemode: false,
      metadata: mergeMetadata({}, params.metadata),
      status: 'enabled',
      url: webhookUrl(params.url),
    };
    const secret = `whsec_${randomBytes(24).toString('hex')}`;
    this.endpoints.set(endpoint.id, endpoint);
    this.secrets.set(endpoint.id, secret);
    return { ...structuredClone(endpoint), secret };
  }

  retrieve(id: string): StripeWebhookEndpoint {
    const endpoint = this.endpoints.get(id);
    if (!endpoint) throw this.notFound(id);
    return structuredClone(endpoint);
  }

  update(id: string, params: Params): StripeWebhookEndpoint {
    const endpoint = this.endpoints.get(id);
    if (!endpoint) throw this.notFound(id);
    unknownParameter(params, UPDATABLE);
    if (params.url !== undefined) endpoint.url = webhookUrl(params.url);
    if (params.enabled_events !== undefined) endpoint.enabled_events = eventList(params.enabled_events);
    if (params.disabled !== undefined) endpoint.status = params.disabled === 'true' ? 'disabled' : 'enabled';
    if (params.description !== undefined) endpoint.description = params.description === '' ? null : String(params.description);
    if (params.metadata !== undefined) endpoint.metadata = mergeMetadata(endpoint.metadata, params.metadata);
    return structuredClone(endpoint);
  }

  delete(id: string): { id: string; object: 'webhook_endpoint'; deleted: true } {
    if (!this.endpoints.delete(id)) throw this.notFound(id);
    this.secrets.delete(id);
    return { id, object: 'webhook_endpoint', deleted: true };
  }

  list(query: URLSearchParams): { object: 'list'; url: string; has_more: boolean; data: StripeWebhookEndpoint[] } {
    const limit = Number(query.get('limit') ?? '10');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('Invalid integer: limit', 'limit', 'parameter_invalid_integer');
    const all = [...this.endpoints.values()].sort((a, b) => b.created - a.created);
    const after = query.get('starting_after');
    const start = after ? all.findIndex((e) => e.id === after) + 1 : 0;
    if (after && start === 0) throw this.notFound(after);
    const page = all.slice(start, start + limit);
    return { object: 'list', url: '/v1/webhook_endpoints', has_more: start + limit < all.length, data: structuredClone(page) };
  }

  /** Test control: an endpoint made by hand in the Dashboard, in the state a test needs. */
  seed(fields: Partial<Omit<StripeWebhookEndpoint, 'id' | 'object'>> & { url: string; enabled_events: string[] }): StripeWebhookEndpoint & { secret: string } {
    const created = this.create({ url: fields.url, enabled_events: fields.enabled_events, ...(fields.api_version ? { api_version: fields.api_version } : {}) });
    const endpoint = this.endpoints.get(created.id)!;
    if (fields.status) endpoint.status = fields.status;
    if (fields.metadata) endpoint.metadata = { ...fields.metadata };
    return { ...structuredClone(endpoint), secret: created.secret };
  }

  /** Test control: what the Dashboard reveals as the endpoint's signing secret. */
  secretOf(id: string): string | undefined {
    return this.secrets.get(id);
  }

  all(): StripeWebhookEndpoint[] {
    return structuredClone([...this.endpoints.values()]);
  }
}
