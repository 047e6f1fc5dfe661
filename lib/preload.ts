/**
 * Loads at start (instrumentation.ts, not awaited) what a first request would load on its path:
 * Redis and its scripts first (its round trips overlap the rest), the routes, the Stripe SDK.
 * A request that comes earlier waits on the same promise; a failure here only loses the head start.
 */
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { getRedisConnection } from '@/lib/redis/connection';
import { loadRequestScripts } from '@/lib/shared-state/request-redis';
import { getServices } from '@/lib/services';

/** Answers when every part has finished or failed (for tests: the instance does not wait for it). */
export function preloadAtStart(): Promise<unknown> {
  let services;
  try {
    services = getServices();
  } catch {
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

/** Next.js loads a route's code on its first request (100-150 ms of CPU): loaded here, through its own route module. */
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
    // Loading a route holds the thread: a request that arrived meanwhile goes first.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      const { routeModule } = load(`./${file}`) as { routeModule?: { ensureUserland?: () => Promise<void> } };
      await routeModule?.ensureUserland?.();
    } catch {
    }
  }
}
