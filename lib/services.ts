/**
 * The service's collaborators, built once per process from the configuration, and the one place
 * that chooses where shared state lives and how each piece falls back (docs/architecture.md#the-layers).
 */
import type { CardProvider } from '@/lib/card/stripe';
import { getConfig, requireSetting, resetConfig, type Config } from '@/lib/config';
import { closeRedisConnection, getRedisConnection, type RedisConnection } from '@/lib/redis/connection';
import { FallbackWarning, withFallback } from '@/lib/shared-state/fallback';
import {
  MemoryOrderLocks,
  ORDER_LOCK_WAIT_MS,
  orderLocksWithFallback,
  orderLocksWithoutFallback,
  orderLockTtlMs,
  RedisOrderLocks,
  type LockWait,
  type OrderLocks,
} from '@/lib/shared-state/order-locks';
import { MemoryProcessedEvents, RedisProcessedEvents, type ProcessedEvents } from '@/lib/shared-state/processed-events';
import { MemoryRateLimiter, rateLimiterWithFallback, type RateLimiter } from '@/lib/shared-state/rate-limit';
import { RedisRateLimiter } from '@/lib/shared-state/request-redis';
import { reconcileCursorWithFallback } from '@/lib/shared-state/reconcile-cursor/fallback';
import { MemoryReconcileCursorStore, type ReconcileCursorStore } from '@/lib/shared-state/reconcile-cursor/reconcile-cursor';
import { RedisReconcileCursorStore } from '@/lib/shared-state/reconcile-cursor/redis';
import { RedisShipmentCursorStore, shipmentCursorWithFallback } from '@/lib/shared-state/shipment-cursor/redis';
import { MemoryShipmentCursorStore, type ShipmentCursorStore } from '@/lib/shared-state/shipment-cursor/shipment-cursor';
import { ShippedStatusWithFallback } from '@/lib/shared-state/shipped-status/fallback';
import { RedisShippedStatus } from '@/lib/shared-state/shipped-status/redis';
import { MemoryShippedStatus, type ShippedStatusMemory } from '@/lib/shared-state/shipped-status/shipped-status';
import { ShippingReplayQueueWithFallback } from '@/lib/shared-state/shipping-replay/fallback';
import { RedisShippingReplayQueue } from '@/lib/shared-state/shipping-replay/redis';
import { MemoryShippingReplayQueue, type ShippingReplayQueue } from '@/lib/shared-state/shipping-replay/replay-queue';
import { ShipStationBudgetWithFallback } from '@/lib/shared-state/shipstation-budget/fallback';
import {
  MemoryShipStationRateBudget,
  SHIPSTATION_V2_REQUESTS_PER_MINUTE,
  type ShipStationRateBudget,
} from '@/lib/shared-state/shipstation-budget/rate-budget';
import { RedisShipStationRateBudget } from '@/lib/shared-state/shipstation-budget/redis';
import { StoreGate } from '@/lib/shared-state/store-gate';
import { MemoryStoreSlots, RedisStoreSlots, type StoreSlots } from '@/lib/shared-state/store-slots';
import { ShipStationClient, shipStationSettings } from '@/lib/shipping/shipstation';
import { ShipStationV2Client, shipStationV2Settings } from '@/lib/shipping/shipstation-v2';
import { ShipStationV2Keys } from '@/lib/shipping/signature-v2';
import type { Store } from '@/lib/store/types';
import { WooCommerceStore } from '@/lib/store/woocommerce';

interface SharedState {
  rateLimiter: RateLimiter;
  orderLocks: OrderLocks;
  /** The same locks, never this instance's alone while Redis is configured (docs/decisions.md#d29). */
  cardEventLocks: OrderLocks;
  processedEvents: ProcessedEvents;
  reconcileCursor: ReconcileCursorStore;
  shipmentCursor: ShipmentCursorStore;
  shipmentCursorsV2: { labels: ShipmentCursorStore; fulfillments: ShipmentCursorStore };
  shippingReplay: ShippingReplayQueue;
  shippedStatus: ShippedStatusMemory;
  storeSlots: StoreSlots | undefined;
  shipStationBudget: (account: string, api?: 'v1' | 'v2') => ShipStationRateBudget;
}

export interface Services extends Omit<SharedState, 'shipStationBudget'> {
  config: Config;
  shipStation: ShipStationClient | undefined;
  shipStationV2: ShipStationV2Client | undefined;
  shipStationV2Keys: ShipStationV2Keys;
  /** Built on first use, so an unconfigured part fails only the requests that need it. */
  store(): Store;
  /** Loaded on first use: the Stripe SDK (about 17 MiB, 80 ms) stays out of routes that never call it. */
  card(): Promise<CardProvider>;
  /** With REDIS_URL set: a PING through the connection every request uses (the deep health check). */
  sharedStatePing?: () => Promise<unknown>;
}

let current: Services | undefined;

function inProcessState(config: Config): SharedState & { shippingReplay: MemoryShippingReplayQueue } {
  const locks = new MemoryOrderLocks(lockWait(config));
  return {
    rateLimiter: new MemoryRateLimiter(),
    orderLocks: locks,
    cardEventLocks: locks,
    processedEvents: new MemoryProcessedEvents(),
    reconcileCursor: new MemoryReconcileCursorStore(),
    shipmentCursor: new MemoryShipmentCursorStore(),
    shipmentCursorsV2: { labels: new MemoryShipmentCursorStore(), fulfillments: new MemoryShipmentCursorStore() },
    shippingReplay: new MemoryShippingReplayQueue(),
    shippedStatus: new MemoryShippedStatus(),
    shipStationBudget: (_account, api) => new MemoryShipStationRateBudget(Date.now, api === 'v2' ? SHIPSTATION_V2_REQUESTS_PER_MINUTE : undefined),
    storeSlots: config.storeConcurrency ? new MemoryStoreSlots(config.storeConcurrency) : undefined,
  };
}

/** A writer waits at most ORDER_LOCK_WAIT_MS, keeping one UPSTREAM_TIMEOUT_MS for the work under the lock. */
function lockWait(config: Config): LockWait {
  return { waitMs: ORDER_LOCK_WAIT_MS, reserveMs: config.upstreamTimeoutMs };
}

function redisState(redis: RedisConnection, config: Config, local: ReturnType<typeof inProcessState>): SharedState {
  const warning = new FallbackWarning();
  const prefix = config.redisKeyPrefix;
  const sharedLocks = new RedisOrderLocks(redis, { prefix, ttlMs: orderLockTtlMs(config.upstreamTimeoutMs), ...lockWait(config) });
  return {
    rateLimiter: rateLimiterWithFallback(new RedisRateLimiter(redis, { prefix }), local.rateLimiter, warning),
    // This instance's locks first, always: its writers never overlap, whatever Redis does.
    orderLocks: orderLocksWithFallback(sharedLocks, local.orderLocks, warning),
    cardEventLocks: orderLocksWithoutFallback(sharedLocks, local.orderLocks),
    processedEvents: new RedisProcessedEvents(redis, { prefix }),
    reconcileCursor: reconcileCursorWithFallback(new RedisReconcileCursorStore(redis, { prefix })),
    shipmentCursor: shipmentCursorWithFallback(new RedisShipmentCursorStore(redis, { prefix })),
    shipmentCursorsV2: {
      labels: shipmentCursorWithFallback(new RedisShipmentCursorStore(redis, { prefix: `${prefix}v2-labels:` })),
      fulfillments: shipmentCursorWithFallback(new RedisShipmentCursorStore(redis, { prefix: `${prefix}v2-fulfillments:` })),
    },
    shippingReplay: new ShippingReplayQueueWithFallback(new RedisShippingReplayQueue(redis, { prefix }), local.shippingReplay),
    shippedStatus: new ShippedStatusWithFallback(new RedisShippedStatus(redis, { prefix }), local.shippedStatus, warning),
    shipStationBudget: (account, api) =>
      new ShipStationBudgetWithFallback(
        new RedisShipStationRateBudget(redis, account, { prefix, api }),
        local.shipStationBudget(account, api),
        warning,
      ),
    // While Redis is down, this instance's own semaphore keeps the same cap; a waiter leaving is noted on both.
    storeSlots:
      config.storeConcurrency && local.storeSlots
        ? withFallback('store_slots', warning, new RedisStoreSlots(redis, config.storeConcurrency, { prefix }), local.storeSlots, [
            'stopWaiting',
          ])
        : undefined,
  };
}

function build(config: Config): Services {
  let store: Store | undefined;
  let card: Promise<CardProvider> | undefined;
  const local = inProcessState(config);
  const redis = getRedisConnection(config);
  const state = redis ? redisState(redis, config, local) : local;
  const gate = state.storeSlots ? new StoreGate(state.storeSlots) : undefined;
  const { shipStationBudget, ...shared } = state;
  return {
    config,
    ...shared,
    ...(redis ? { sharedStatePing: () => redis.run('ping', (client) => client.ping()) } : {}),
    shipStation: shipStationClientFor(config, shipStationBudget),
    shipStationV2: shipStationV2ClientFor(config, shipStationBudget),
    shipStationV2Keys: new ShipStationV2Keys(config.shippingV2.jwksUrl, config.upstreamTimeoutMs),
    store: () => (store ??= new WooCommerceStore(requireSetting(config, 'store'), config.upstreamTimeoutMs, gate)),
    card: () => {
      const settings = requireSetting(config, 'card');
      card ??= import('@/lib/card/stripe').then(
        ({ StripeCardProvider }) => new StripeCardProvider(settings, config.upstreamTimeoutMs),
        (error: unknown) => {
          card = undefined;
          throw error;
        },
      );
      return card;
    },
  };
}

function shipStationClientFor(config: Config, budgetOf: SharedState['shipStationBudget']): ShipStationClient | undefined {
  const settings = shipStationSettings(config);
  return settings ? new ShipStationClient(settings, { budget: budgetOf(settings.apiKey) }) : undefined;
}

function shipStationV2ClientFor(config: Config, budgetOf: SharedState['shipStationBudget']): ShipStationV2Client | undefined {
  const settings = shipStationV2Settings(config);
  return settings ? new ShipStationV2Client(settings, { budget: budgetOf(settings.apiKey, 'v2') }) : undefined;
}

export function getServices(): Services {
  current ??= build(getConfig());
  return current;
}

/** For tests and the demo launcher. */
export function resetServices(): void {
  resetConfig();
  current = undefined;
  void closeRedisConnection();
}
