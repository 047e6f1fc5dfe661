/**
 * ShipStation's request budget: 40 requests per minute per API key and
 * secret, reported on every response as X-Rate-Limit-Limit, -Remaining and
 * -Reset (seconds until the window ends).
 *
 * The budget starts from the documented limit and is corrected by the headers
 * of each response, so the service stops asking before ShipStation has to
 * answer 429. The in-process budget counts one instance's requests; with
 * Redis every instance draws on one budget per account
 * (lib/shared-state/shipstation-budget/redis.ts). Either way a 429 is still handled.
 */
export const SHIPSTATION_REQUESTS_PER_MINUTE = 40;
/** The V2 API's (api.shipstation.com) own budget: 200 requests a minute per API key, a 429 says how long with Retry-After. */
export const SHIPSTATION_V2_REQUESTS_PER_MINUTE = 200;
export const BUDGET_WINDOW_MS = 60_000;
/** A Reset header beyond this is not believed (a misread or a unit mix-up would otherwise stall every delivery). */
const MAX_RESET_SECONDS = 120;

export interface ShipStationRateBudget {
  /**
   * Takes one request from the budget and returns 0, or returns how many
   * milliseconds to wait before asking again (nothing is taken then).
   */
  reserve(): Promise<number>;
  /** Adopts what a response says about the current window. */
  observe(headers: Headers): Promise<void>;
  /** A 429: nothing is left until the window ShipStation names (or Retry-After) has passed. */
  throttled(headers: Headers): Promise<void>;
}

function headerNumber(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)?.trim();
  if (!raw || !/^\d+(\.\d+)?$/.test(raw)) return undefined;
  return Number(raw);
}

/** What a response's headers say, checked and capped: the limit, and the remaining count with its window's end. */
export interface BudgetReport {
  limit: number | undefined;
  window: { remaining: number; resetInMs: number } | undefined;
}

export function readBudgetHeaders(headers: Headers): BudgetReport {
  const limit = headerNumber(headers, 'x-rate-limit-limit');
  const remaining = headerNumber(headers, 'x-rate-limit-remaining');
  const reset = headerNumber(headers, 'x-rate-limit-reset');
  return {
    limit: limit !== undefined && limit > 0 ? Math.floor(limit) : undefined,
    window:
      remaining === undefined || reset === undefined
        ? undefined
        : { remaining: Math.floor(remaining), resetInMs: Math.min(reset, MAX_RESET_SECONDS) * 1000 },
  };
}

/** How long a 429 stops requests: ShipStation's Reset, else Retry-After, else a whole window. */
export function throttledForMs(headers: Headers): number {
  const seconds = headerNumber(headers, 'x-rate-limit-reset') ?? headerNumber(headers, 'retry-after') ?? BUDGET_WINDOW_MS / 1000;
  return Math.min(seconds, MAX_RESET_SECONDS) * 1000;
}

export class MemoryShipStationRateBudget implements ShipStationRateBudget {
  private limit: number;
  private remaining: number;
  private resetAt = 0;

  constructor(
    private readonly now: () => number = Date.now,
    perMinute = SHIPSTATION_REQUESTS_PER_MINUTE,
  ) {
    this.limit = perMinute;
    this.remaining = perMinute;
  }

  async reserve(): Promise<number> {
    const now = this.now();
    if (now >= this.resetAt) {
      this.remaining = this.limit;
      this.resetAt = now + BUDGET_WINDOW_MS;
    }
    if (this.remaining > 0) {
      this.remaining -= 1;
      return 0;
    }
    return this.resetAt - now;
  }

  async observe(headers: Headers): Promise<void> {
    const report = readBudgetHeaders(headers);
    if (report.limit !== undefined) this.limit = report.limit;
    if (!report.window) return;
    const resetAt = this.now() + report.window.resetInMs;
    // Within the window already counted, requests still in flight were taken from the
    // budget but not yet from ShipStation's count: keep the lower figure. A later
    // window (Reset is in whole seconds, hence the slack) starts from ShipStation's.
    const newerWindow = resetAt > this.resetAt + 1000;
    this.remaining = newerWindow ? report.window.remaining : Math.min(report.window.remaining, this.remaining);
    this.resetAt = resetAt;
  }

  async throttled(headers: Headers): Promise<void> {
    this.remaining = 0;
    this.resetAt = this.now() + throttledForMs(headers);
  }
}
