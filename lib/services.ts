/**
 * The service's collaborators, built once per process from the configuration, and the one place
 * that chooses where shared state lives and how each piece falls back (docs/architecture.md#the-layers).
 */
import type { CardProvider } from '@/lib/card/stripe';
import { getConfig, requireSetting, resetConfig, type Config } from '@/lib/config';
import { closeRedisConnection, getRedisConnection, type RedisConnection } from '@/lib/redis/connection';
import { MemoryCursorStore, RECONCILE_CURSOR, RedisCursorStore, SHIPMENT_CURSOR } from '@/lib/shared-state/cursor';
import type { CursorKind, CursorStore, ReconcileCursor, ShipmentCursor, ShipmentCursorStore } from '@/lib/shared-state/cursor';
import { FallbackWarning, withFallback } from '@/lib/shared-state/fallback';
import { MemoryOrderLocks, orderLocksWithFallback, orderLocksWithoutFallback, orderLockTtlMs } from '@/lib/shared-state/order-locks';
import { RedisOrderLocks, type OrderLocks } from '@/lib/shared-state/order-locks';
import { MemoryProcessedEvents, RedisProcessedEvents, type ProcessedEvents } from '@/lib/shared-state/processed-events';
import { MemoryRateLimiter, rateLimiterWithFallback, type RateLimiter } from '@/lib/shared-state/rate-limit';
import { RedisRateLimiter } from '@/lib/shared-state/request-redis';
import { MemoryShippedStatus, RedisShippedStatus, shippedStatusWithFallback } from '@/lib/shared-state/shipped-status';
import type { ShippedStatusMemory } from '@/lib/shared-state/shipped-status';
import { MemoryShippingReplayQueue, RedisShippingReplayQueue, shippingReplayWithFallback } from '@/lib/shared-state/shipping-replay';
import type { ShippingReplayQueue } from '@/lib/shared-state/shipping-replay';
import { MemoryShipStationRateBudget, RedisShipStationRateBudget, type ShipStationRateBudget } from '@/lib/shared-state/shipstation-budget';
import { SHIPSTATION_V2_REQUESTS_PER_MINUTE } from '@/lib/shared-state/shipstation-budget';
import { StoreGate } from '@/lib/shared-state/store-gate';
import { MemoryStoreSlots, RedisStoreSlots, type StoreSlots } from '@/lib/shared-state/store-slots';
import { ShipStationClient, shipStationSettings } from '@/lib/shipping/shipstation';
import { ShipStationV2Client, shipStationV2Settings } from '@/lib/shipping/shipstation-v2';
import { ShipStationV2Keys } from '@/lib/shipping/signature-v2';
import { WooCommerceStore, type Store } from '@/lib/store/woocommerce';

interface SharedState {
  rateLimiter: RateLimiter;
  orderLocks: OrderLocks;
  /** The same locks, never this instance's alone while Redis is configured (docs/decisions.md#d29). */
  cardEventLocks: OrderLocks;
  processedEvents: ProcessedEvents;
  reconcileCursor: CursorStore<ReconcileCursor>;
  shipmentCursor: ShipmentCursorStore;
  shipmentCursorsV2: { labels: ShipmentCursorStore; fulfillments: ShipmentCursorStore };
  shippingReplay: ShippingReplayQueue;
  shippedStatus: ShippedStatusMemory;
  storeSlots: StoreSlots | undefined;
  shipStationBudget: (account: string, api?: 'v1' | 'v2') => ShipStationRateBudget;
}

export type Services = ReturnType<typeof build>;

let current: Services | undefined;

/**
 * Without Redis, this instance's memory. With it, every piece in Redis, falling back to this memory while Redis fails, but for the
 * card webhook's locks and processed events (Stripe retries instead) and the replay cron's reads of its queue (the run fails).
 */
function sharedState(config: Config, redis: RedisConnection | undefined): SharedState {
  // A writer waits at most ORDER_LOCK_WAIT_MS (the locks' default), keeping one UPSTREAM_TIMEOUT_MS for the work under the lock.
  const wait = { reserveMs: config.upstreamTimeoutMs };
  const locks = new MemoryOrderLocks(wait);
  const local = {
    rateLimiter: new MemoryRateLimiter(),
    orderLocks: locks,
    cardEventLocks: locks,
    processedEvents: new MemoryProcessedEvents(),
    reconcileCursor: new MemoryCursorStore<ReconcileCursor>(),
    shipmentCursor: new MemoryCursorStore<ShipmentCursor>(),
    shipmentCursorsV2: { labels: new MemoryCursorStore<ShipmentCursor>(), fulfillments: new MemoryCursorStore<ShipmentCursor>() },
    shippingReplay: new MemoryShippingReplayQueue(),
    shippedStatus: new MemoryShippedStatus(),
    shipStationBudget: (_account: string, api?: 'v1' | 'v2') =>
      new MemoryShipStationRateBudget(Date.now, api === 'v2' ? SHIPSTATION_V2_REQUESTS_PER_MINUTE : undefined),
    storeSlots: config.storeConcurrency ? new MemoryStoreSlots(config.storeConcurrency) : undefined,
  };
  if (!redis) return local;
  const warning = new FallbackWarning();
  const prefix = config.redisKeyPrefix;
  const cursor = <C>(kind: CursorKind<C>, at = prefix) => new RedisCursorStore(redis, kind, at);
  const slots = config.storeConcurrency && new RedisStoreSlots(redis, config.storeConcurrency, { prefix });
  const sharedLocks = new RedisOrderLocks(redis, { prefix, ttlMs: orderLockTtlMs(config.upstreamTimeoutMs), ...wait });
  return {
    rateLimiter: rateLimiterWithFallback(new RedisRateLimiter(redis, { prefix }), local.rateLimiter, warning),
    // This instance's locks first, always: its writers never overlap, whatever Redis does.
    orderLocks: orderLocksWithFallback(sharedLocks, local.orderLocks, warning),
    cardEventLocks: orderLocksWithoutFallback(sharedLocks, local.orderLocks),
    processedEvents: new RedisProcessedEvents(redis, { prefix }),
    reconcileCursor: cursor(RECONCILE_CURSOR),
    shipmentCursor: cursor(SHIPMENT_CURSOR),
    shipmentCursorsV2: {
      labels: cursor(SHIPMENT_CURSOR, `${prefix}v2-labels:`),
      fulfillments: cursor(SHIPMENT_CURSOR, `${prefix}v2-fulfillments:`),
    },
    shippingReplay: shippingReplayWithFallback(new RedisShippingReplayQueue(redis, { prefix }), local.shippingReplay),
    shippedStatus: shippedStatusWithFallback(new RedisShippedStatus(redis, { prefix }), local.shippedStatus, warning),
    shipStationBudget: (account, api) => {
      const shared = new RedisShipStationRateBudget(redis, account, { prefix, api });
      return withFallback<ShipStationRateBudget>('shipstation_budget', warning, shared, local.shipStationBudget(account, api));
    },
    // While Redis is down, this instance's own semaphore keeps the same cap; a waiter leaving is noted on both.
    storeSlots:
      slots && local.storeSlots ? withFallback<StoreSlots>('store_slots', warning, slots, local.storeSlots, ['stopWaiting']) : undefined,
  };
}

function build(config: Config) {
  let store: Store | undefined;
  let card: Promise<CardProvider> | undefined;
  const redis = getRedisConnection(config);
  const state = sharedState(config, redis);
  const gate = state.storeSlots ? new StoreGate(state.storeSlots) : undefined;
  const { shipStationBudget, ...shared } = state;
  const v1 = shipStationSettings(config);
  const v2 = shipStationV2Settings(config);
  return {
    config,
    ...shared,
    // With REDIS_URL set: a PING through the connection every request uses (the deep health check).
    ...(redis ? { sharedStatePing: (): Promise<unknown> => redis.run('ping', (client) => client.ping()) } : {}),
    shipStation: v1 ? new ShipStationClient(v1, { budget: shipStationBudget(v1.apiKey) }) : undefined,
    shipStationV2: v2 ? new ShipStationV2Client(v2, { budget: shipStationBudget(v2.apiKey, 'v2') }) : undefined,
    shipStationV2Keys: new ShipStationV2Keys(config.shippingV2.jwksUrl, config.upstreamTimeoutMs),
    // Built on first use, so an unconfigured part fails only the requests that need it.
    store: (): Store => (store ??= new WooCommerceStore(requireSetting(config, 'store'), config.upstreamTimeoutMs, gate)),
    // Loaded on first use: the Stripe SDK (about 17 MiB, 80 ms) stays out of routes that never call it.
    card: (): Promise<CardProvider> => {
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
