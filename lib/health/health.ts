/**
 * GET /api/health (docs/contract.md#cron-routes-and-health): from memory without credentials; with the
 * cron token, each upstream's cheapest authenticated call, never a URL, key or upstream message.
 */
import packageJson from '@/package.json';
import { stripePaymentMethodDomains, unregisteredStorefrontDomains } from '@/lib/checkout/express-domains';
import { CardProviderError, ServiceError, StoreBusyError, StoreSignatureRefusedError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { STRIPE_SDK_API_VERSION, stripeWebhookEvents } from '@/lib/webhooks/setup/events';
import { listWebhookEndpoints, stripeWebhookProblem } from '@/lib/webhooks/setup/stripe-setup';

const SERVICE_VERSION: string = packageJson.version;

/** Resolves to what is set up wrong though the upstream answered, or to nothing when healthy. */
type Probe = () => Promise<string | void>;

const failureKind = (error: unknown) => (error instanceof ServiceError ? error.kind : 'unexpected');

function probes(services: Services): Record<string, Probe> {
  const redis = services.sharedStatePing;
  const { card, serviceUrl, upstreamTimeoutMs } = services.config;
  return {
    store: async () => void (await services.store().checkReachable()),
    // The call reconciliation depends on, for one event of the last minute: cheap, and proves the key can read events.
    card: async () => {
      await (await services.card()).listEvents({ types: ['payment_intent.succeeded'], createdFrom: Math.floor(Date.now() / 1000) - 60, limit: 1 });
    },
    ...(redis ? { redis: async () => void (await redis()) } : {}),
    // This deployment's Stripe webhook endpoint as Stripe has it; not run while the deployment's URL is unknown.
    ...(card && serviceUrl ? { cardWebhook: async () => {
      const wanted = { serviceUrl, events: stripeWebhookEvents(services.config), apiVersion: STRIPE_SDK_API_VERSION };
      return stripeWebhookProblem(await listWebhookEndpoints(card, upstreamTimeoutMs), wanted, card.webhookSecrets);
    } } : {}),
  };
}

async function run(name: string, probe: Probe) {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const reason = await probe();
    if (reason === undefined) return { ok: true, latencyMs: latency() };
    log.warn('health.check_failed', { check: name, reason: 'webhook_misconfigured', latencyMs: latency() });
    return { ok: false, latencyMs: latency(), reason };
  } catch (error) {
    const latencyMs = latency();
    const busy = error instanceof StoreBusyError;
    log.warn('health.check_failed', { check: name, reason: busy ? 'store_busy' : failureKind(error), latencyMs });
    if (error instanceof StoreSignatureRefusedError) return { ok: false, latencyMs, reason: error.hint };
    if (name === 'cardWebhook' && error instanceof CardProviderError && (error.status === 401 || error.status === 403)) {
      return { ok: false, latencyMs, reason: 'Stripe refused to list the webhook endpoints: a restricted key (rk_) needs the Webhook Endpoints read permission' };
    }
    return busy ? { ok: false, latencyMs, busy } : { ok: false, latencyMs };
  }
}

/** An informational read: its failure is logged and the field left out, never degrading the status. */
async function unlessFailed<T>(event: string, fields: { check?: string }, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    log.warn(event, { ...fields, reason: failureKind(error) });
    return undefined;
  }
}

export function shallowHealth() {
  return { status: 'ok' as const, version: SERVICE_VERSION };
}

export async function deepHealth(services: Services) {
  const { card, allowedOrigins, upstreamTimeoutMs } = services.config;
  // Read before the probes, so the store probe's own slot is not counted.
  const storeSlots = await unlessFailed('health.store_slots_unreadable', {}, async () => services.storeSlots?.usage());
  const [entries, walletDomains] = await Promise.all([
    Promise.all(Object.entries(probes(services)).map(async ([name, probe]) => [name, await run(name, probe)] as const)),
    // A storefront may not offer wallets at all, so an unregistered domain never degrades the status.
    card &&
      unlessFailed('health.check_failed', { check: 'walletDomains' }, () =>
        unregisteredStorefrontDomains(allowedOrigins, stripePaymentMethodDomains(card, upstreamTimeoutMs)),
      ),
  ]);
  const checks = Object.fromEntries(entries);
  const healthy = Object.values(checks).every((result) => result.ok);
  return { status: healthy ? ('ok' as const) : ('degraded' as const), version: SERVICE_VERSION, checks,
    ...(storeSlots ? { storeSlots } : {}),
    ...(walletDomains?.length ? { walletDomains } : {}),
  };
}
