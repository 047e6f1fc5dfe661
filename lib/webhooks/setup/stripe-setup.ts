// The deployment's Stripe webhook endpoint, set up or checked (docs/decisions.md#d39). An endpoint's API version cannot
// change, so a wrong one is replaced and removed once the deployment accepts the new secret.
import { createHash, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { stripeSdk, toCardError } from '@/lib/card/stripe-http';
import type { CardSettings } from '@/lib/config';
import { CardProviderError } from '@/lib/errors';
import { send } from '@/lib/upstream/node-http';
import { parsedUrl, STRIPE_WEBHOOK_PATH, STRIPE_WEBHOOK_PATHS, webhookTarget } from '@/lib/webhooks/setup/events';

type Endpoint = Stripe.WebhookEndpoint;
type StripeSettings = Pick<CardSettings, 'secretKey' | 'apiBaseUrl' | 'webhookSecrets'>;

export interface WantedEndpoint {
  serviceUrl: string;
  events: readonly string[];
  apiVersion: string;
}

export interface StripeSetupReport {
  endpointId: string;
  /** What was done, in words (an old endpoint removed included); empty when the endpoint was up to date. */
  changes: string[];
  /** Only when an endpoint was created: Stripe shows it this once. */
  newSecret?: string;
  /** Old endpoints kept, and why. */
  waiting: { id: string; why: string }[];
  /** Endpoints with the webhook's path on another host: reported, never touched. */
  elsewhere: { id: string; url: string }[];
}

const failed = (operation: string) => (error: unknown): never => {
  throw toCardError(operation, error);
};

/** The account's endpoints (up to 20 pages of 100). */
export function listWebhookEndpoints(settings: Pick<CardSettings, 'secretKey' | 'apiBaseUrl'>, timeoutMs: number): Promise<Endpoint[]> {
  const pages = stripeSdk(settings, timeoutMs, 1).webhookEndpoints.list({ limit: 100 });
  return pages.autoPagingToArray({ limit: 2000 }).catch(failed('list webhook endpoints'));
}

/** A short digest kept in the endpoint's metadata, so whoever holds the secrets can tell which one is its. */
export function secretFingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16);
}

export const webhookUrl = (serviceUrl: string) => webhookTarget(serviceUrl, STRIPE_WEBHOOK_PATH);

const sameOrigin = (url: string, serviceUrl: string) => parsedUrl(url)?.origin === parsedUrl(serviceUrl)?.origin;
const webhookPath = (url: string) => STRIPE_WEBHOOK_PATHS.includes((parsedUrl(url)?.pathname ?? '').replace(/\/+$/, ''));
const enabled = (endpoint: Endpoint) => endpoint.status !== 'disabled';

function missingEvents(endpoint: Endpoint, events: readonly string[]): string[] {
  if (endpoint.enabled_events.includes('*')) return [];
  return events.filter((type) => !endpoint.enabled_events.includes(type));
}

/** The deployment's endpoints, the one to keep first: the right version, pointing at the webhook, enabled, newest. */
function rank(endpoints: Endpoint[], wanted: WantedEndpoint): Endpoint[] {
  const score = (e: Endpoint) =>
    (e.api_version === wanted.apiVersion ? 8 : 0) + (webhookPath(e.url) ? 4 : 0) + (enabled(e) ? 2 : 0) + (missingEvents(e, wanted.events).length === 0 ? 1 : 0);
  return [...endpoints].sort((a, b) => score(b) - score(a) || b.created - a.created);
}

function versionText(version: string | null): string {
  return version === null ? "the account's default API version" : `API version ${version}`;
}

/** In plain words for the health check; given the deployment's secrets, the setup command's endpoint is checked by its digest. */
export function stripeWebhookProblem(endpoints: Endpoint[], wanted: WantedEndpoint, secrets?: readonly string[]): string | undefined {
  const ours = rank(endpoints.filter((e) => sameOrigin(e.url, wanted.serviceUrl) && webhookPath(e.url)), wanted);
  const best = ours[0];
  if (!best) return `no Stripe webhook endpoint points at this deployment (${STRIPE_WEBHOOK_PATH} of SERVICE_URL): run npm run setup:webhooks`;
  const problems: string[] = [];
  if (!enabled(best)) problems.push('is disabled');
  const missing = missingEvents(best, wanted.events);
  if (missing.length > 0) problems.push(`lacks ${missing.join(', ')}`);
  if (best.api_version !== wanted.apiVersion) problems.push(`speaks ${versionText(best.api_version)}, not the SDK's ${wanted.apiVersion}`);
  const reasons = problems.length > 0 ? [`the Stripe webhook endpoint for this deployment ${problems.join(', ')}: run npm run setup:webhooks`] : [];
  const digest = best.metadata.secret_sha256;
  if (digest && secrets && !secrets.some((secret) => secretFingerprint(secret) === digest)) {
    reasons.push(
      `STRIPE_WEBHOOK_SECRET does not hold the signing secret of ${best.id}, the endpoint for this deployment, so its deliveries are refused: set it (printed by npm run setup:webhooks, or revealed in the Stripe Dashboard) and redeploy`,
    );
  }
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}

export async function setupStripeWebhook(card: StripeSettings, wanted: WantedEndpoint, timeoutMs: number): Promise<StripeSetupReport> {
  const endpoints = stripeSdk(card, timeoutMs, 1).webhookEndpoints;
  const target = webhookUrl(wanted.serviceUrl);
  const all = await listWebhookEndpoints(card, timeoutMs);
  const ours = rank(all.filter((e) => sameOrigin(e.url, wanted.serviceUrl)), wanted);
  const elsewhere = all.filter((e) => !sameOrigin(e.url, wanted.serviceUrl) && webhookPath(e.url)).map((e) => ({ id: e.id, url: e.url }));
  const keep = ours.find((e) => e.api_version === wanted.apiVersion);
  // Only an endpoint on the webhook's own path is ever replaced or removed.
  const replaceable = ours.filter((e) => e !== keep && webhookPath(e.url) && e.api_version !== wanted.apiVersion);
  const report: StripeSetupReport = { endpointId: '', changes: [], waiting: [], elsewhere };

  if (!keep) {
    const old = replaceable[0];
    const { id, secret } = await endpoints
      .create({
        url: target,
        enabled_events: [...wanted.events] as Stripe.WebhookEndpointCreateParams.EnabledEvent[],
        api_version: wanted.apiVersion as Stripe.WebhookEndpointCreateParams.ApiVersion,
        description: 'Checkout payment service (npm run setup:webhooks)',
        metadata: { managed_by: 'checkout-payment-service', ...(old ? { replaces: old.id } : {}) },
      })
      .catch(failed('create webhook endpoint'));
    if (!secret) throw new CardProviderError('create webhook endpoint', 'bad_response', undefined, undefined);
    report.endpointId = id;
    report.newSecret = secret;
    report.changes.push(old ? `created ${id} for API version ${wanted.apiVersion} (${old.id} speaks ${versionText(old.api_version)}, which Stripe cannot change)` : `created ${id}`);
    // Only the create answer carries the secret: its digest is what a later run checks the deployment's secrets against.
    try {
      await endpoints.update(id, { metadata: { secret_sha256: secretFingerprint(secret) } });
    } catch {
      // The secret is printed all the same; only the automatic removal of an old endpoint is lost.
      report.changes.push(`could not record the secret's digest on ${id}: remove an old endpoint in the Stripe Dashboard once the deployment holds the new secret`);
    }
    for (const endpoint of replaceable) report.waiting.push({ id: endpoint.id, why: 'kept until the deployment holds the new secret: run this again then' });
    return report;
  }

  report.endpointId = keep.id;
  const changes: Stripe.WebhookEndpointUpdateParams = {};
  if (!webhookPath(keep.url)) {
    changes.url = target;
    report.changes.push(`url set to ${STRIPE_WEBHOOK_PATH} (was ${parsedUrl(keep.url)?.pathname ?? 'unreadable'})`);
  }
  if (!enabled(keep)) {
    changes.disabled = false;
    report.changes.push('enabled (it was disabled)');
  }
  const missing = missingEvents(keep, wanted.events);
  const extra = keep.enabled_events.filter((type) => !wanted.events.includes(type));
  if (missing.length + extra.length > 0) {
    changes.enabled_events = [...wanted.events] as Stripe.WebhookEndpointUpdateParams.EnabledEvent[];
    report.changes.push(`events set to the configuration's${missing.length ? `, adding ${missing.join(', ')}` : ''}${extra.length ? `, removing ${extra.join(', ')}` : ''}`);
  }
  if (Object.keys(changes).length > 0) await endpoints.update(keep.id, changes).catch(failed('update webhook endpoint'));

  if (replaceable.length === 0) return report;
  const why = await secretInPlace(keep, card.webhookSecrets, timeoutMs);
  if (why !== undefined) {
    report.waiting.push(...replaceable.map((endpoint) => ({ id: endpoint.id, why })));
    return report;
  }
  for (const endpoint of replaceable) {
    await endpoints.del(endpoint.id).catch(failed('delete webhook endpoint'));
    report.changes.push(
      `removed ${endpoint.id}: the deployment accepts the new endpoint's secret; drop ${endpoint.id}'s secret from STRIPE_WEBHOOK_SECRET at your next deploy`,
    );
  }
  return report;
}

/**
 * Why the endpoint's new secret is not in place yet, or undefined once it is: a secret held here is the endpoint's
 * (by its digest) and the deployment accepts a delivery signed with it alone.
 */
async function secretInPlace(endpoint: Endpoint, secrets: readonly string[], timeoutMs: number): Promise<string | undefined> {
  const digest = endpoint.metadata.secret_sha256;
  if (!digest) return `${endpoint.id} was not made by this command, so its secret cannot be recognised: delete the old endpoint in the Stripe Dashboard once the deployment holds ${endpoint.id}'s secret`;
  const secret = secrets.find((candidate) => secretFingerprint(candidate) === digest);
  if (!secret) return `STRIPE_WEBHOOK_SECRET here does not hold ${endpoint.id}'s secret: add it where the service runs (beside the old one), redeploy, and run this again with that environment`;
  // A delivery of a type no handler reads, signed as Stripe signs.
  const now = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    id: `evt_setup_probe_${randomBytes(8).toString('hex')}`,
    object: 'event',
    type: 'checkout_service.setup_probe',
    created: now,
    livemode: false,
    data: { object: { id: 'setup_probe', object: 'setup_probe' } },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: now });
  try {
    const headers = { 'content-type': 'application/json', 'stripe-signature': signature };
    const answer = await send({ url: new URL(endpoint.url), method: 'POST', headers, body, timeoutMs });
    if (answer.status >= 200 && answer.status < 300) return undefined;
    return `the deployment refused a delivery signed with ${endpoint.id}'s secret (HTTP ${answer.status}): deploy STRIPE_WEBHOOK_SECRET with it, then run this again`;
  } catch {
    return `the deployment could not be reached to check ${endpoint.id}'s secret: run this again once it answers`;
  }
}
