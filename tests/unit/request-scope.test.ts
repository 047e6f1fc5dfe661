/**
 * The request's deferred rate-limit hit (lib/shared-state/rate-limit.ts) is counted before any upstream call: over the
 * limit, the call is never made, whatever the use case forgot; a Redis call (the script that would carry it) is not held.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '@/lib/errors';
import { inRequestScope, requestScopeOf } from '@/lib/request-scope';
import { DeferredRateLimitHit, MemoryRateLimiter, type RateLimitRule } from '@/lib/shared-state/rate-limit';
import { traceCall } from '@/lib/telemetry';

const RULE: RateLimitRule = { name: 'payment-intent', limit: 1, windowMs: 60_000 };

function requestWithDeferredHit(limiter: MemoryRateLimiter) {
  const scope = requestScopeOf({ requestId: 'r', route: '/api/payment-intent', storeCaller: 'checkout' });
  const count = () => limiter.hit(RULE, '203.0.113.7');
  scope.notes.rateLimitHit = new DeferredRateLimitHit(RULE, '203.0.113.7', count, count);
  return scope;
}

describe('an upstream call counts the request’s deferred rate-limit hit first', () => {
  it('over the limit, the store, card and ShipStation calls are never made', async () => {
    const limiter = new MemoryRateLimiter();
    await limiter.hit(RULE, '203.0.113.7');
    for (const system of ['store', 'card', 'shipstation'] as const) {
      let called = false;
      const call = inRequestScope(requestWithDeferredHit(limiter), () => traceCall(system, 'get order', async () => (called = true)));
      await expect(call).rejects.toBeInstanceOf(RateLimitedError);
      expect(called).toBe(false);
    }
  });

  it('under the limit the call runs and the hit is counted once; a Redis call leaves the hit to its script', async () => {
    let counted = 0;
    const scope = requestScopeOf({ storeCaller: 'checkout' });
    const count = async () => ({ allowed: true, limit: 10, remaining: 10 - (counted += 1), resetAt: 0 });
    scope.notes.rateLimitHit = new DeferredRateLimitHit(RULE, '203.0.113.7', count, count);
    await inRequestScope(scope, async () => {
      expect(await traceCall('redis', 'lock_acquire', async () => 'sent')).toBe('sent');
      expect(counted).toBe(0);
      expect(await traceCall('store', 'get order', async () => 'order')).toBe('order');
      expect(await traceCall('card', 'retrieve intent', async () => 'intent')).toBe('intent');
    });
    expect(counted).toBe(1);
  });
});
