/**
 * Time budgets of the cron routes. A run starts a unit of work (a page of
 * events, one event, one shipment, one ShipStation batch) only when that
 * unit's worst case still fits before the function's limit, so it stops and
 * reports instead of being killed mid-write; the rest waits for the next run.
 *
 * The worst cases follow from the upstream timeout T (UPSTREAM_TIMEOUT_MS,
 * 10 s by default) and are what vercel.json's maxDuration values are computed
 * from (docs/operations.md, "Running in production"). A unit that takes an order's lock
 * waits for it within its own deadline (lib/shared-state/order-locks/order-locks.ts), so the
 * wait adds nothing to its worst case.
 */
import { pageWorstCaseMs, SHIPMENT_PAGES_PER_READ } from '@/lib/shipping/shipstation';
import { REQUEST_BUDGET_TIMEOUTS, withRequestDeadline } from '@/lib/upstream/budget';

/** maxDuration of both cron functions in vercel.json, in seconds (Vercel's default and Hobby's ceiling with fluid compute). */
export const CRON_MAX_DURATION_SECONDS = 300;
/** Kept free at the end of a run for answering and logging. */
export const CRON_SAFETY_MARGIN_MS = 5_000;
/** A read is retried once after a pause of at most 250 ms (lib/upstream/budget.ts); 2 s leaves room. */
const CARD_RETRY_BACKOFF_MS = 2_000;

export const worstCase = {
  /** One page of events: a call and its one retry. */
  eventPage: (timeoutMs: number) => 2 * timeoutMs + CARD_RETRY_BACKOFF_MS,
  /** One card event (lock wait, read the order, restore or clear the cart, write the order): its unit deadline bounds them all. */
  cardEvent: (timeoutMs: number) => unitDeadlineMs(timeoutMs),
  /** One shipment (lock wait, read the order, write `shipped`, write the `completed` fallback): likewise. */
  shipment: (timeoutMs: number) => unitDeadlineMs(timeoutMs),
  /** One read of a ShipStation batch: its pages (a longer batch is read in several), each with the budget wait bounded by T and the call bounded by T. */
  shipStationBatch: (timeoutMs: number) => SHIPMENT_PAGES_PER_READ * pageWorstCaseMs(timeoutMs),
};

/**
 * Runs one unit of a cron run with its own upstream deadline, as a webhook
 * delivery of the same work would have: the run as a whole is bounded by its
 * maxDuration, each unit by its own worst case, so a slow unit cannot eat the
 * time of the ones after it and a late unit is never cut by an earlier one.
 */
export function asUnit<T>(deadlineMs: number, work: () => Promise<T>): Promise<T> {
  return withRequestDeadline(deadlineMs, work);
}

/** What a webhook delivery of one event or one shipment may spend upstream (lib/http/route.ts). */
export const unitDeadlineMs = (timeoutMs: number) => REQUEST_BUDGET_TIMEOUTS * timeoutMs;

/** The clock of one run: whether a unit of work of a given worst case still fits. */
export class RunBudget {
  private readonly deadline: number;

  constructor(
    maxDurationMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.deadline = this.now() + maxDurationMs - CRON_SAFETY_MARGIN_MS;
  }

  fits(worstCaseMs: number): boolean {
    return this.now() + worstCaseMs <= this.deadline;
  }
}
