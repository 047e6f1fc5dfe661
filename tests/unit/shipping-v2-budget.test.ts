/**
 * ShipStation V2's request budget: 200 a minute per API key, its own count beside V1's 40, shared
 * by every instance through Redis, and a 429's Retry-After stops every instance.
 */
import { describe, expect, it } from 'vitest';
import { MemoryShipStationRateBudget, SHIPSTATION_V2_REQUESTS_PER_MINUTE } from '@/lib/shared-state/shipstation-budget';
import { RedisShipStationRateBudget } from '@/lib/shared-state/shipstation-budget';
import { noRedis, REDIS_SKIP_REASON, redisConnection, testPrefix } from '../support/redis';

describe('the V2 budget in one instance', () => {
  it('allows 200 requests a minute, then says how long to wait', async () => {
    let time = 1_800_000_000_000;
    const budget = new MemoryShipStationRateBudget(() => time, SHIPSTATION_V2_REQUESTS_PER_MINUTE);
    for (let i = 0; i < 200; i += 1) expect(await budget.reserve()).toBe(0);
    time += 20_000;
    expect(await budget.reserve()).toBe(40_000);
  });
});

describe.skipIf(noRedis)(`the V2 budget shared by every instance${noRedis ? ` (skipped: ${REDIS_SKIP_REASON})` : ''}`, () => {
  it("is counted apart from V1's for the same key, shared across instances, and stopped by a 429's Retry-After", async () => {
    const prefix = testPrefix('v2-budget');
    const [a, b] = [redisConnection(), redisConnection()];
    let time = 1_800_000_000_000;
    const now = () => time;
    const onA = new RedisShipStationRateBudget(a, 'same-key', { prefix, now, api: 'v2' });
    const onB = new RedisShipStationRateBudget(b, 'same-key', { prefix, now, api: 'v2' });
    const v1 = new RedisShipStationRateBudget(b, 'same-key', { prefix, now });
    for (let i = 0; i < 200; i += 1) expect(await (i % 2 ? onA : onB).reserve()).toBe(0);
    expect(await onA.reserve()).toBe(60_000);
    expect(await v1.reserve()).toBe(0);

    time += 60_000;
    await onB.throttled(new Headers({ 'Retry-After': '7' }));
    expect(await onA.reserve()).toBe(7_000);
  });
});
