/**
 * The service's collaborators, built once per process from the configuration.
 * Use cases receive them as interfaces; tests swap the configuration and call
 * resetServices() to get fresh state.
 */
import { StripeCardProvider, type CardProvider } from '@/lib/card/stripe';
import { getConfig, requireSetting, resetConfig, type Config } from '@/lib/config';
import { MemoryReconcileCursorStore, type ReconcileCursorStore } from '@/lib/cron/reconcile-cursor';
import { MemoryOrderLocks, type OrderLocks } from '@/lib/security/order-lock';
import { MemoryProcessedEvents, type ProcessedEvents } from '@/lib/security/processed-events';
import { MemoryRateLimiter, type RateLimiter } from '@/lib/security/rate-limit';
import { ShipStationClient, shipStationSettings } from '@/lib/shipping/shipstation';
import { WooCommerceStore } from '@/lib/store/woocommerce';
import type { Store } from '@/lib/store/types';
import { MemoryShippingReplayQueue, type ShippingReplayQueue } from '@/lib/webhooks/shipping/replay-queue';
import { ShippedStatusMemory } from '@/lib/webhooks/shipping/shipped-status';

export interface Services {
  config: Config;
  rateLimiter: RateLimiter;
  orderLocks: OrderLocks;
  processedEvents: ProcessedEvents;
  /** Where an interrupted payment reconciliation resumes. */
  reconcileCursor: ReconcileCursorStore;
  /** Shipping updates that failed at the store, until the replay cron applies them. */
  shippingReplay: ShippingReplayQueue;
  /** Whether the store was recently found to lack the `shipped` status. */
  shippedStatus: ShippedStatusMemory;
  /** ShipStation's API, or undefined when SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET are not both set. */
  shipStation: ShipStationClient | undefined;
  /** Built on first use, so an unconfigured part fails only the requests that need it. */
  store(): Store;
  card(): CardProvider;
}

let current: Services | undefined;

function build(config: Config): Services {
  let store: Store | undefined;
  let card: CardProvider | undefined;
  return {
    config,
    rateLimiter: new MemoryRateLimiter(),
    orderLocks: new MemoryOrderLocks(),
    processedEvents: new MemoryProcessedEvents(),
    reconcileCursor: new MemoryReconcileCursorStore(),
    shippingReplay: new MemoryShippingReplayQueue(),
    shippedStatus: new ShippedStatusMemory(),
    shipStation: shipStationClientFor(config),
    store: () => (store ??= new WooCommerceStore(requireSetting(config, 'store'), config.upstreamTimeoutMs)),
    card: () => (card ??= new StripeCardProvider(requireSetting(config, 'card'), config.upstreamTimeoutMs)),
  };
}

function shipStationClientFor(config: Config): ShipStationClient | undefined {
  const settings = shipStationSettings(config);
  return settings ? new ShipStationClient(settings) : undefined;
}

export function getServices(): Services {
  current ??= build(getConfig());
  return current;
}

/** Drops every collaborator and the parsed configuration (tests, and the demo launcher). */
export function resetServices(): void {
  resetConfig();
  current = undefined;
}
