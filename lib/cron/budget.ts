/**
 * Cron time budgets: a run starts a unit of work only when its worst case still fits, so it stops and
 * reports instead of being killed mid-write (docs/operations.md#cron-jobs-and-cron_secret).
 */
import { pageWorstCaseMs, SHIPMENT_PAGES_PER_READ } from '@/lib/shipping/shipstation';
import { REQUEST_BUDGET_TIMEOUTS } from '@/lib/upstream/budget';

/** vercel.json's maxDuration: Vercel's default and Hobby's ceiling with fluid compute. */
export const CRON_MAX_DURATION_SECONDS = 300;
export const CRON_SAFETY_MARGIN_MS = 5_000;
/** A read is retried once after a pause of at most 250 ms (lib/upstream/budget.ts); 2 s leaves room. */
const CARD_RETRY_BACKOFF_MS = 2_000;

export const worstCase = {
  eventPage: (timeoutMs: number) => 2 * timeoutMs + CARD_RETRY_BACKOFF_MS,
  // A lock wait stays within the unit's deadline, so it adds nothing here.
  cardEvent: (timeoutMs: number) => unitDeadlineMs(timeoutMs),
  shipment: (timeoutMs: number) => unitDeadlineMs(timeoutMs),
  shipStationBatch: (timeoutMs: number) => SHIPMENT_PAGES_PER_READ * pageWorstCaseMs(timeoutMs),
};

/** Each unit of work's own deadline (withRequestDeadline), as a delivery's: a slow unit cannot eat the next one's time. */
export const unitDeadlineMs = (timeoutMs: number) => REQUEST_BUDGET_TIMEOUTS * timeoutMs;

export function runBudget(maxDurationMs: number, now: () => number = Date.now) {
  const deadline = now() + maxDurationMs - CRON_SAFETY_MARGIN_MS;
  return { fits: (worstCaseMs: number) => now() + worstCaseMs <= deadline };
}

/** What a run asks of its budget; tests hand in their own. */
export type Budget = ReturnType<typeof runBudget>;
