/**
 * What the bench (scripts/bench/run.ts) and its stand-ins process
 * (scripts/bench/stand-ins.ts) agree on. Kept apart so that importing it
 * never starts the stand-ins.
 */

export interface UpstreamCall {
  upstream: string;
  method: string;
  /** Path without the query (which carries OAuth parameters over http). */
  path: string;
  status: number;
  /** Milliseconds on this process's monotonic clock; only differences mean anything. */
  start: number;
  end: number;
}

export interface BenchStandInUrls {
  woocommerce: string;
  woocommerceHttps?: string;
  stripe: string;
  control: string;
}

/** The order every bench order is: 2 × 20.00 + 5.00 shipping = 45.00 USD, charged as 4500 cents. */
export const BENCH_ORDER_TOTAL_CENTS = 4500;
