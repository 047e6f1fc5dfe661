/**
 * What a first request would otherwise load on its path, started when the
 * instance starts (instrumentation.ts) and not awaited there: the Redis client
 * (its library, the client and the connection, with REDIS_URL) and the Lua
 * scripts of a request, the routes' own modules, and the Stripe SDK (with the
 * card settings). A first request
 * that arrives before they are ready waits only for what it needs, on the same
 * promise (lib/redis/connection.ts, lib/services.ts `card()`, Next.js' own
 * route loading), never for a second copy; one that arrives later finds them
 * ready. A failure here is only a head start lost: the request that needs the
 * part tries again, as it would have without this.
 *
 * The Redis connection is started first: its network round trips (TLS to a
 * managed Redis) run while the routes and the Stripe SDK load.
 */
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { getRedisConnection } from '@/lib/redis/connection';
import { loadRequestScripts } from '@/lib/redis/gate';
import { getServices } from '@/lib/services';

/** Answers when every part has finished or failed (for tests: the instance does not wait for it). */
export function preloadAtStart(): Promise<unknown> {
  let services;
  try {
    services = getServices();
  } catch {
    // An invalid configuration: the start-up checks report it, and requests fail with it.
    return Promise.resolve();
  }
  const parts: Promise<unknown>[] = [];
  const redis = getRedisConnection(services.config);
  if (redis) parts.push(redis.run('script_load', loadRequestScripts));
  if (process.env.NODE_ENV === 'production') parts.push(preloadRoutes(join(process.cwd(), '.next', 'server')));
  // Node compiles the IPv6 pattern on its first use: every request's client address passes through it.
  isIP('::1');
  if (services.config.card) parts.push(services.card());
  return Promise.allSettled(parts);
}

/**
 * Next.js loads the module of each route at start, but the route's own code
 * (its handler and everything it imports: this service's modules, the zod
 * schemas they build) only on the route's first request, which measured about
 * 100-150 ms of CPU on that request alone. Loaded here instead, through the
 * route module Next.js itself uses (the same instance, from Node's module
 * cache), in the build's list of routes (`server`: the build's server
 * directory). Only in a production build: the development server compiles each
 * route on its first request. A deployment that ships each route on its own
 * finds only its own. Answers when every route is loaded (or failed to).
 */
export async function preloadRoutes(server: string): Promise<void> {
  const load = createRequire(join(server, 'preload.js'));
  let routes: Record<string, string>;
  try {
    routes = load('./app-paths-manifest.json') as Record<string, string>;
  } catch {
    return;
  }
  for (const file of Object.values(routes)) {
    if (!file.startsWith('app/api/')) continue;
    // One route at a time, and a request that arrived meanwhile goes first: loading a route holds
    // the thread, and a request for a route already loaded (or for none) need not wait for the rest.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      const { routeModule } = load(`./${file}`) as { routeModule?: { ensureUserland?: () => Promise<void> } };
      await routeModule?.ensureUserland?.();
    } catch {
      // A route not in this deployment, or one whose module fails: its first request loads it, and says why.
    }
  }
}
