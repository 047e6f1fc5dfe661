import { describe, expect, it } from 'vitest';
import { MemoryShipStationRateBudget } from '@/lib/shared-state/shipstation-budget';

function clock(start = 1_000_000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

const headers = (limit: string, remaining: string, reset: string) =>
  new Headers({ 'X-Rate-Limit-Limit': limit, 'X-Rate-Limit-Remaining': remaining, 'X-Rate-Limit-Reset': reset });

describe('ShipStation request budget', () => {
  it('allows 40 requests a minute before any header is seen, then says how long to wait', async () => {
    const { state, now } = clock();
    const budget = new MemoryShipStationRateBudget(now);
    for (let i = 0; i < 40; i += 1) expect(await budget.reserve()).toBe(0);
    state.now += 15_000;
    expect(await budget.reserve()).toBe(45_000);
    state.now += 45_000;
    expect(await budget.reserve()).toBe(0);
  });

  it('adopts Remaining and Reset (seconds) from a response', async () => {
    const { state, now } = clock();
    const budget = new MemoryShipStationRateBudget(now);
    expect(await budget.reserve()).toBe(0);
    await budget.observe(headers('40', '0', '12'));
    expect(await budget.reserve()).toBe(12_000);
    state.now += 12_000;
    expect(await budget.reserve()).toBe(0);
  });

  it('keeps requests already in flight counted when a response reports more remaining', async () => {
    const budget = new MemoryShipStationRateBudget(clock().now);
    for (let i = 0; i < 39; i += 1) await budget.reserve();
    // Only the first request had reached ShipStation when it answered.
    await budget.observe(headers('40', '39', '59'));
    expect(await budget.reserve()).toBe(0);
    expect(await budget.reserve()).toBeGreaterThan(0);
  });

  it("starts from ShipStation's figure when its window is newer than the one counted", async () => {
    const { state, now } = clock();
    const budget = new MemoryShipStationRateBudget(now);
    for (let i = 0; i < 40; i += 1) await budget.reserve();
    state.now += 59_000;
    await budget.observe(headers('40', '39', '60'));
    expect(await budget.reserve()).toBe(0);
  });

  it('a 429 stops requests until its reset', async () => {
    const { state, now } = clock();
    const budget = new MemoryShipStationRateBudget(now);
    await budget.throttled(new Headers({ 'X-Rate-Limit-Reset': '7' }));
    expect(await budget.reserve()).toBe(7_000);
    state.now += 7_000;
    expect(await budget.reserve()).toBe(0);
  });

  it('a 429 without headers waits a whole window; Retry-After is honoured', async () => {
    const budget = new MemoryShipStationRateBudget(clock().now);
    await budget.throttled(new Headers());
    expect(await budget.reserve()).toBe(60_000);
    await budget.throttled(new Headers({ 'Retry-After': '3' }));
    expect(await budget.reserve()).toBe(3_000);
  });

  it('ignores malformed headers and caps an implausible reset', async () => {
    const budget = new MemoryShipStationRateBudget(clock().now);
    await budget.observe(headers('forty', '-1', 'soon'));
    expect(await budget.reserve()).toBe(0);
    await budget.observe(headers('40', '0', '86400'));
    expect(await budget.reserve()).toBe(120_000);
  });
});
