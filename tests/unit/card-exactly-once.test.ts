import { describe, expect, it } from 'vitest';
import { MemoryOrderLocks } from '@/lib/shared-state/order-locks';
import { MemoryProcessedEvents } from '@/lib/shared-state/processed-events';
import { applyEventOnce, processedEventKey } from '@/lib/card-payments/apply-event';

function services() {
  return { cardEventLocks: new MemoryOrderLocks(), processedEvents: new MemoryProcessedEvents() };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('card webhook: applying an event exactly once', () => {
  it('applies an event once and reports the repeat as a duplicate', async () => {
    const s = services();
    let applied = 0;
    const apply = async () => {
      applied += 1;
      return 'paid' as const;
    };
    expect(await applyEventOnce(s, 1, 'evt_1', apply)).toBe('paid');
    expect(await applyEventOnce(s, 1, 'evt_1', apply)).toBe('duplicate_event');
    expect(applied).toBe(1);
    expect(await s.processedEvents.has(processedEventKey('evt_1'))).toBe(true);
  });

  it('runs concurrent deliveries of one event one at a time, applying the first only', async () => {
    const s = services();
    let running = 0;
    let maxRunning = 0;
    let applied = 0;
    const apply = async () => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await tick();
      applied += 1;
      running -= 1;
      return 'paid' as const;
    };
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => applyEventOnce(s, 7, 'evt_7', apply)));
    expect(applied).toBe(1);
    expect(maxRunning).toBe(1);
    expect(outcomes.filter((o) => o === 'duplicate_event')).toHaveLength(7);
  });

  it('does not remember an event whose change failed, so the retry applies it', async () => {
    const s = services();
    let attempts = 0;
    const apply = async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('store unavailable');
      return 'paid' as const;
    };
    await expect(applyEventOnce(s, 3, 'evt_3', apply)).rejects.toThrow('store unavailable');
    expect(await s.processedEvents.has(processedEventKey('evt_3'))).toBe(false);
    expect(await applyEventOnce(s, 3, 'evt_3', apply)).toBe('paid');
    expect(attempts).toBe(2);
  });

  it('remembers an event whose receipt the handler found on the order, so the next duplicate costs no store call', async () => {
    const s = services();
    expect(await applyEventOnce(s, 5, 'evt_5', async () => 'duplicate_event' as const)).toBe('duplicate_event');
    expect(await s.processedEvents.has(processedEventKey('evt_5'))).toBe(true);
  });

  it('serializes different events for the same order', async () => {
    const s = services();
    const order: string[] = [];
    const slow = (name: string) => async () => {
      order.push(`${name} start`);
      await tick();
      order.push(`${name} end`);
      return 'done' as const;
    };
    await Promise.all([applyEventOnce(s, 9, 'evt_a', slow('a')), applyEventOnce(s, 9, 'evt_b', slow('b'))]);
    expect(order).toEqual(['a start', 'a end', 'b start', 'b end']);
  });
});
