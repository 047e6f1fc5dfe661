/**
 * What every route family (checkout, webhooks, cron, store callbacks) adds to
 * the generic wrapper (lib/http/route.ts): whose slots the request's store
 * calls take (lib/shared-state/store-slots/store-slots.ts), and the request's
 * rate-limit hit, counted by its first Redis script or on the way out.
 */
import type { StoreCaller } from '@/lib/config';
import { RateLimitedError } from '@/lib/errors';
import { clientIp } from '@/lib/http/client-ip';
import { runRoute, type HandlerResult, type RunOptions } from '@/lib/http/route';
import type { RequestContext } from '@/lib/log';
import type { Services } from '@/lib/services';
import { deferRateLimitHit, settlePendingRateLimit, withRateLimitScope } from '@/lib/shared-state/rate-limit/pending';
import type { RateLimitRule } from '@/lib/shared-state/rate-limit/rate-limit';
import { withStoreCaller } from '@/lib/shared-state/store-slots/store-slots';

export interface FamilyRouteOptions extends RunOptions {
  /** Whose slots its store calls take. */
  storeCaller: StoreCaller;
}

/** Runs a family's handler inside the generic wrapper, with its store caller and its rate-limit scope. */
export function runFamilyRoute(options: FamilyRouteOptions, handler: (context: RequestContext) => Promise<HandlerResult>): Promise<Response> {
  return runRoute(options, (context) =>
    withStoreCaller(options.storeCaller, () => withRateLimitScope(() => settlingRateLimit(() => handler(context)))),
  );
}

/**
 * Counts the request against the endpoint's limit; RateLimitedError when it is over. With Redis the
 * hit is noted and counted by the request's first Redis script (lib/shared-state/rate-limit/pending.ts);
 * `settlingRateLimit` counts it on the way out for a request that ran none.
 */
export async function enforceRateLimit(services: Services, rule: RateLimitRule, headers: Headers): Promise<void> {
  const client = clientIp(headers, services.config.trustProxyHops, services.config.clientIpHeader);
  const pending = services.rateLimiter.defer?.(rule, client);
  if (pending && deferRateLimitHit(pending)) return;
  const decision = await services.rateLimiter.hit(rule, client);
  if (!decision.allowed) throw new RateLimitedError(decision);
}

/**
 * A request whose hit no Redis script counted counts it now, whatever the handler answered: over the
 * limit, the answer is 429, as if the hit had been counted first (docs/contract.md#spec-8). Nothing before the first
 * script reaches an upstream (lib/shared-state/rate-limit/pending.ts says how), so a 429 found here
 * follows CPU work only: origin, body, token or signature checks.
 */
async function settlingRateLimit<T>(handler: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await handler();
  } catch (error) {
    try {
      await settlePendingRateLimit();
    } catch (settleError) {
      if (settleError instanceof RateLimitedError) throw settleError;
    }
    throw error;
  }
  await settlePendingRateLimit();
  return result;
}
