/**
 * What a first request would otherwise load on its path, started when the
 * instance starts (instrumentation.ts) and not awaited there: the Redis client
 * (its library, the client and the connection, with REDIS_URL) and the Stripe
 * SDK (with the card settings). A first request that arrives before they are
 * ready waits only for what it needs, on the same promise (lib/redis/connection.ts,
 * lib/services.ts `card()`), never for a second copy; one that arrives later
 * finds them ready. A failure here is only a head start lost: the request
 * that needs the part tries again, as it would have without this.
 *
 * The Redis connection is started first: its network round trips (TLS to a
 * managed Redis) run while the Stripe SDK loads.
 */
import { getRedisConnection } from '@/lib/redis/connection';
import { getServices } from '@/lib/services';

export function preloadAtStart(): void {
  let services;
  try {
    services = getServices();
  } catch {
    // An invalid configuration: the start-up checks report it, and requests fail with it.
    return;
  }
  void getRedisConnection(services.config)
    ?.client()
    .catch(() => undefined);
  if (services.config.card) void services.card().catch(() => undefined);
}
