/**
 * ShipStation's request budget: 40 requests per minute per API key and
 * secret, reported on every response as X-Rate-Limit-Limit, -Remaining and
 * -Reset (seconds until the window ends).
 *
 * The budget starts from the documented limit and is corrected by the headers
 * of each response, so this process stops asking before ShipStation has to
 * answer 429. It is per process: several instances sharing one key still meet
 * a 429 now and then, which the client handles the same way.
 */
export const SHIPSTATION_REQUESTS_PER_MINUTE = 40;
const WINDOW_MS = 60_000;
/** A Reset header beyond this is not believed (a misread or a unit mix-up would otherwise stall every delivery). */
const MAX_RESET_SECONDS = 120;

function headerNumber(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)?.trim();
  if (!raw || !/^\d+(\.\d+)?$/.test(raw)) return undefined;
  return Number(raw);
}

export class ShipStationRateBudget {
  private limit = SHIPSTATION_REQUESTS_PER_MINUTE;
  private remaining = SHIPSTATION_REQUESTS_PER_MINUTE;
  private resetAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Takes one request from the budget and returns 0, or returns how many
   * milliseconds to wait before asking again (nothing is taken then).
   */
  reserve(): number {
    const now = this.now();
    if (now >= this.resetAt) {
      this.remaining = this.limit;
      this.resetAt = now + WINDOW_MS;
    }
    if (this.remaining > 0) {
      this.remaining -= 1;
      return 0;
    }
    return this.resetAt - now;
  }

  /** Adopts what a response says about the current window. */
  observe(headers: Headers): void {
    const limit = headerNumber(headers, 'x-rate-limit-limit');
    const remaining = headerNumber(headers, 'x-rate-limit-remaining');
    const reset = headerNumber(headers, 'x-rate-limit-reset');
    if (limit !== undefined && limit > 0) this.limit = Math.floor(limit);
    if (remaining === undefined || reset === undefined) return;
    const resetAt = this.now() + Math.min(reset, MAX_RESET_SECONDS) * 1000;
    // Within the window already counted, requests still in flight were taken from the
    // budget but not yet from ShipStation's count: keep the lower figure. A later
    // window (Reset is in whole seconds, hence the slack) starts from ShipStation's.
    const newerWindow = resetAt > this.resetAt + 1000;
    this.remaining = newerWindow ? Math.floor(remaining) : Math.min(Math.floor(remaining), this.remaining);
    this.resetAt = resetAt;
  }

  /** A 429: nothing is left until the window ShipStation names (or Retry-After) has passed. */
  throttled(headers: Headers): void {
    const seconds = headerNumber(headers, 'x-rate-limit-reset') ?? headerNumber(headers, 'retry-after') ?? WINDOW_MS / 1000;
    this.remaining = 0;
    this.resetAt = this.now() + Math.min(seconds, MAX_RESET_SECONDS) * 1000;
  }
}
