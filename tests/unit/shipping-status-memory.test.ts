import { describe, expect, it } from 'vitest';
import { MemoryShippedStatus, SHIPPED_MISSING_TTL_MS } from '@/lib/shared-state/shipped-status';

describe('memory that the store lacks the shipped status', () => {
  it('writes shipped until told otherwise, completed for the TTL after, then shipped again', async () => {
    let now = 0;
    const memory = new MemoryShippedStatus(SHIPPED_MISSING_TTL_MS, () => now);
    expect(await memory.statusToWrite()).toBe('shipped');
    await memory.rememberShippedMissing();
    expect(await memory.statusToWrite()).toBe('completed');
    now += SHIPPED_MISSING_TTL_MS - 1;
    expect(await memory.statusToWrite()).toBe('completed');
    now += 1;
    expect(await memory.statusToWrite()).toBe('shipped');
  });

  it('lasts a few minutes', () => {
    expect(SHIPPED_MISSING_TTL_MS).toBeGreaterThanOrEqual(2 * 60_000);
    expect(SHIPPED_MISSING_TTL_MS).toBeLessThanOrEqual(15 * 60_000);
  });
});
