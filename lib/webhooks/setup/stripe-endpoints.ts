// Stripe's webhook endpoints through the SDK; errors carry Stripe's type, status and code, never its message.
import Stripe from 'stripe';
import { stripeSdk, toCardError } from '@/lib/card/stripe-http';
import type { CardSettings } from '@/lib/config';
import { CardProviderError } from '@/lib/errors';

export interface WebhookEndpoint {
  id: string;
  url: string;
  enabledEvents: readonly string[];
  /** Null: the account's default version. */
  apiVersion: string | null;
  enabled: boolean;
  metadata: Readonly<Record<string, string>>;
  created: number;
}

export interface EndpointChanges {
  url?: string;
  enabledEvents?: readonly string[];
  enabled?: boolean;
  metadata?: Record<string, string>;
}

export type StripeWebhookEndpoints = ReturnType<typeof stripeWebhookEndpoints>;

interface NewEndpoint {
  url: string;
  enabledEvents: readonly string[];
  apiVersion: string;
  description: string;
  metadata: Record<string, string>;
}

const MAX_PAGES = 20;

function summarize(endpoint: Stripe.WebhookEndpoint): WebhookEndpoint {
  return {
    id: endpoint.id,
    url: endpoint.url,
    enabledEvents: [...endpoint.enabled_events],
    apiVersion: endpoint.api_version ?? null,
    enabled: endpoint.status !== 'disabled',
    metadata: { ...(endpoint.metadata ?? {}) },
    created: endpoint.created,
  };
}

async function call<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toCardError(operation, error);
  }
}

export function stripeWebhookEndpoints(settings: Pick<CardSettings, 'secretKey' | 'apiBaseUrl'>, timeoutMs: number) {
  const stripe = stripeSdk(settings, timeoutMs, 1);
  return {
    async list(): Promise<WebhookEndpoint[]> {
      const all: WebhookEndpoint[] = [];
      let startingAfter: string | undefined;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const result = await call('list webhook endpoints', () =>
          stripe.webhookEndpoints.list({ limit: 100, ...(startingAfter ? { starting_after: startingAfter } : {}) }),
        );
        all.push(...result.data.map(summarize));
        if (!result.has_more || result.data.length === 0) break;
        startingAfter = result.data.at(-1)?.id;
      }
      return all;
    },
    /** The new endpoint and its signing secret, which Stripe gives this once. */
    async create(input: NewEndpoint): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      const created = await call('create webhook endpoint', () =>
        stripe.webhookEndpoints.create({
          url: input.url,
          enabled_events: [...input.enabledEvents] as Stripe.WebhookEndpointCreateParams.EnabledEvent[],
          api_version: input.apiVersion as Stripe.WebhookEndpointCreateParams.ApiVersion,
          description: input.description,
          metadata: input.metadata,
        }),
      );
      if (!created.secret) throw new CardProviderError('create webhook endpoint', 'bad_response', undefined, undefined);
      return { endpoint: summarize(created), secret: created.secret };
    },
    async update(id: string, changes: EndpointChanges): Promise<WebhookEndpoint> {
      const updated = await call('update webhook endpoint', () =>
        stripe.webhookEndpoints.update(id, {
          ...(changes.url !== undefined ? { url: changes.url } : {}),
          ...(changes.enabledEvents !== undefined
            ? { enabled_events: [...changes.enabledEvents] as Stripe.WebhookEndpointUpdateParams.EnabledEvent[] }
            : {}),
          ...(changes.enabled !== undefined ? { disabled: !changes.enabled } : {}),
          ...(changes.metadata !== undefined ? { metadata: changes.metadata } : {}),
        }),
      );
      return summarize(updated);
    },
    async remove(id: string): Promise<void> {
      await call('delete webhook endpoint', () => stripe.webhookEndpoints.del(id));
    },
  };
}
