// The providers' webhook events for this configuration: the one list setup subscribes, health compares and
// docs/integrations/stripe.md shows (a test keeps them equal).
import Stripe from 'stripe';
import type { Config } from '@/lib/config';
import { handledEventTypes } from '@/lib/card-payments/apply-event';

/** The API version the installed `stripe` SDK pins: its types describe events of that version only. */
export const STRIPE_SDK_API_VERSION: string = Stripe.API_VERSION;

/** Where a Stripe endpoint should point (docs/integrations/stripe.md); the neutral name serves the same handler. */
export const STRIPE_WEBHOOK_PATH = '/api/stripe/webhook';
export const STRIPE_WEBHOOK_PATHS: readonly string[] = [STRIPE_WEBHOOK_PATH, '/api/cardprovider/webhook'];

export function stripeWebhookEvents(config: Pick<Config, 'lifecycleEvents' | 'capture'>): string[] {
  return handledEventTypes(config).sort();
}

export function webhookTarget(serviceUrl: string, path: string): string {
  return `${serviceUrl.replace(/\/+$/, '')}${path}`;
}

export const parsedUrl = (url: string): URL | undefined => (URL.canParse(url) ? new URL(url) : undefined);
