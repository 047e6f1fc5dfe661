// The deployment's Stripe webhook endpoint, set up or checked (docs/decisions.md#d39). An endpoint's API version cannot
// change, so a wrong one is replaced and removed once the deployment accepts the new secret.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { EndpointChanges, StripeWebhookEndpoints, WebhookEndpoint } from '@/lib/webhooks/setup/stripe-endpoints';
import { parsedUrl, STRIPE_WEBHOOK_PATH, STRIPE_WEBHOOK_PATHS, webhookTarget } from '@/lib/webhooks/setup/events';

export const MANAGED_BY = 'checkout-payment-service';
const DESCRIPTION = 'Checkout payment service (npm run setup:webhooks)';

export interface WantedEndpoint {
  serviceUrl: string;
  events: readonly string[];
  apiVersion: string;
}

/** Why an endpoint's new secret is not in place yet, or undefined once the deployment accepts it. */
export type SecretInPlace = (endpoint: WebhookEndpoint) => Promise<string | undefined>;

export interface StripeSetupReport {
  endpointId: string;
  /** What was done, in words; empty when the endpoint was up to date. */
  changes: string[];
  /** Only when an endpoint was created: Stripe shows it this once. */
  newSecret?: string;
  removed: string[];
  /** Old endpoints kept, and why. */
  waiting: { id: string; why: string }[];
  /** Endpoints with the webhook's path on another host: reported, never touched. */
  elsewhere: { id: string; url: string }[];
}

/** A short digest kept in the endpoint's metadata, so whoever holds the secrets can tell which one is its. */
export function secretFingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16);
}

export const webhookUrl = (serviceUrl: string) => webhookTarget(serviceUrl, STRIPE_WEBHOOK_PATH);

const sameOrigin = (url: string, serviceUrl: string) => parsedUrl(url)?.origin === parsedUrl(serviceUrl)?.origin;
const webhookPath = (url: string) => STRIPE_WEBHOOK_PATHS.includes((parsedUrl(url)?.pathname ?? '').replace(/\/+$/, ''));

export function pointsAt(endpoint: WebhookEndpoint, serviceUrl: string): boolean {
  return sameOrigin(endpoint.url, serviceUrl) && webhookPath(endpoint.url);
}

export function missingEvents(endpoint: WebhookEndpoint, events: readonly string[]): string[] {
  if (endpoint.enabledEvents.includes('*')) return [];
  return events.filter((type) => !endpoint.enabledEvents.includes(type));
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v) => b.includes(v));

/** The deployment's endpoints, the one to keep first: the right version, pointing at the webhook, enabled, newest. */
function rank(endpoints: WebhookEndpoint[], wanted: WantedEndpoint): WebhookEndpoint[] {
  const score = (e: WebhookEndpoint) =>
    (e.apiVersion === wanted.apiVersion ? 8 : 0) + (webhookPath(e.url) ? 4 : 0) + (e.enabled ? 2 : 0) + (missingEvents(e, wanted.events).length === 0 ? 1 : 0);
  return [...endpoints].sort((a, b) => score(b) - score(a) || b.created - a.created);
}

function versionText(version: string | null): string {
  return version === null ? "the account's default API version" : `API version ${version}`;
}

/** In plain words for the health check; given the deployment's secrets, the setup command's endpoint is checked by its digest. */
export function stripeWebhookProblem(endpoints: WebhookEndpoint[], wanted: WantedEndpoint, secrets?: readonly string[]): string | undefined {
  const ours = rank(endpoints.filter((e) => pointsAt(e, wanted.serviceUrl)), wanted);
  const best = ours[0];
  if (!best) return `no Stripe webhook endpoint points at this deployment (${STRIPE_WEBHOOK_PATH} of SERVICE_URL): run npm run setup:webhooks`;
  const problems: string[] = [];
  if (!best.enabled) problems.push('is disabled');
  const missing = missingEvents(best, wanted.events);
  if (missing.length > 0) problems.push(`lacks ${missing.join(', ')}`);
  if (best.apiVersion !== wanted.apiVersion) problems.push(`speaks ${versionText(best.apiVersion)}, not the SDK's ${wanted.apiVersion}`);
  const reasons = problems.length > 0 ? [`the Stripe webhook endpoint for this deployment ${problems.join(', ')}: run npm run setup:webhooks`] : [];
  const digest = best.metadata.secret_sha256;
  if (digest && secrets && !secrets.some((secret) => secretFingerprint(secret) === digest)) {
    reasons.push(
      `STRIPE_WEBHOOK_SECRET does not hold the signing secret of ${best.id}, the endpoint for this deployment, so its deliveries are refused: set it (printed by npm run setup:webhooks, or revealed in the Stripe Dashboard) and redeploy`,
    );
  }
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}

export async function setupStripeWebhook(client: StripeWebhookEndpoints, wanted: WantedEndpoint, secretInPlace: SecretInPlace): Promise<StripeSetupReport> {
  const target = webhookUrl(wanted.serviceUrl);
  const all = await client.list();
  const ours = rank(all.filter((e) => sameOrigin(e.url, wanted.serviceUrl)), wanted);
  const elsewhere = all.filter((e) => !sameOrigin(e.url, wanted.serviceUrl) && webhookPath(e.url)).map((e) => ({ id: e.id, url: e.url }));
  const keep = ours.find((e) => e.apiVersion === wanted.apiVersion);
  // Only an endpoint on the webhook's own path is ever replaced or removed.
  const replaceable = ours.filter((e) => e !== keep && webhookPath(e.url) && e.apiVersion !== wanted.apiVersion);
  const report: StripeSetupReport = { endpointId: '', changes: [], removed: [], waiting: [], elsewhere };

  if (!keep) {
    const { endpoint, secret } = await client.create({
      url: target,
      enabledEvents: wanted.events,
      apiVersion: wanted.apiVersion,
      description: DESCRIPTION,
      metadata: { managed_by: MANAGED_BY, ...(replaceable[0] ? { replaces: replaceable[0].id } : {}) },
    });
    report.endpointId = endpoint.id;
    report.newSecret = secret;
    const old = replaceable[0];
    report.changes.push(old ? `created ${endpoint.id} for API version ${wanted.apiVersion} (${old.id} speaks ${versionText(old.apiVersion)}, which Stripe cannot change)` : `created ${endpoint.id}`);
    // Only the create answer carries the secret: its digest is what a later run checks the deployment's secrets against.
    try {
      await client.update(endpoint.id, { metadata: { secret_sha256: secretFingerprint(secret) } });
    } catch {
      // The secret is printed all the same; only the automatic removal of an old endpoint is lost.
      report.changes.push(`could not record the secret's digest on ${endpoint.id}: remove an old endpoint in the Stripe Dashboard once the deployment holds the new secret`);
    }
    for (const endpoint of replaceable) report.waiting.push({ id: endpoint.id, why: 'kept until the deployment holds the new secret: run this again then' });
    return report;
  }

  report.endpointId = keep.id;
  const changes: EndpointChanges = {};
  if (!webhookPath(keep.url)) {
    changes.url = target;
    report.changes.push(`url set to ${STRIPE_WEBHOOK_PATH} (was ${parsedUrl(keep.url)?.pathname ?? 'unreadable'})`);
  }
  if (!keep.enabled) {
    changes.enabled = true;
    report.changes.push('enabled (it was disabled)');
  }
  if (!sameSet(keep.enabledEvents, wanted.events)) {
    changes.enabledEvents = wanted.events;
    const missing = missingEvents(keep, wanted.events);
    const extra = keep.enabledEvents.filter((type) => !wanted.events.includes(type));
    report.changes.push(`events set to the configuration's${missing.length ? `, adding ${missing.join(', ')}` : ''}${extra.length ? `, removing ${extra.join(', ')}` : ''}`);
  }
  if (Object.keys(changes).length > 0) await client.update(keep.id, changes);

  if (replaceable.length > 0) {
    const why = await secretInPlace(keep);
    for (const endpoint of replaceable) {
      if (why !== undefined) {
        report.waiting.push({ id: endpoint.id, why });
        continue;
      }
      await client.remove(endpoint.id);
      report.removed.push(endpoint.id);
    }
  }
  return report;
}

/** A delivery of a type no handler reads, signed as Stripe signs (`t=…,v1=HMAC-SHA256(secret, "t.body")`). */
export function signedProbe(secret: string, now = Math.floor(Date.now() / 1000)): { body: string; signature: string } {
  const body = JSON.stringify({
    id: `evt_setup_probe_${randomBytes(8).toString('hex')}`,
    object: 'event',
    type: 'checkout_service.setup_probe',
    created: now,
    livemode: false,
    data: { object: { id: 'setup_probe', object: 'setup_probe' } },
  });
  const v1 = createHmac('sha256', secret).update(`${now}.${body}`, 'utf8').digest('hex');
  return { body, signature: `t=${now},v1=${v1}` };
}

/** In place: a secret held here is the endpoint's (by its digest) and the deployment accepts a delivery signed with it alone. */
export function deployedSecretCheck(secrets: readonly string[], timeoutMs: number): SecretInPlace {
  return async (endpoint) => {
    const digest = endpoint.metadata.secret_sha256;
    if (!digest) return `${endpoint.id} was not made by this command, so its secret cannot be recognised: delete the old endpoint in the Stripe Dashboard once the deployment holds ${endpoint.id}'s secret`;
    const secret = secrets.find((candidate) => secretFingerprint(candidate) === digest);
    if (!secret) return `STRIPE_WEBHOOK_SECRET here does not hold ${endpoint.id}'s secret: add it where the service runs (beside the old one), redeploy, and run this again with that environment`;
    const probe = signedProbe(secret);
    try {
      const answer = await fetch(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': probe.signature },
        body: probe.body,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      // Read, not cancelled: the signal bounds it, and a cancelled body can keep some fetch mocks waiting.
      await answer.arrayBuffer().catch(() => undefined);
      if (answer.ok) return undefined;
      return `the deployment refused a delivery signed with ${endpoint.id}'s secret (HTTP ${answer.status}): deploy STRIPE_WEBHOOK_SECRET with it, then run this again`;
    } catch {
      return `the deployment could not be reached to check ${endpoint.id}'s secret: run this again once it answers`;
    }
  };
}
