/**
 * One GET to ShipStation (V1 or V2) within the account's rate budget and the request's deadline
 * (docs/decisions.md#d34); a 429 waited out once when it fits; redirects refused, so credentials never follow.
 */
import { ShipStationError } from '@/lib/errors';
import { MemoryShipStationRateBudget, type ShipStationRateBudget } from '@/lib/shared-state/shipstation-budget';
import { readStreamText } from '@/lib/upstream/read-stream';
import { attemptTimeoutMs, MIN_ATTEMPT_MS, requestTimeLeftMs, RETRY_JITTER_MAX_MS, RETRY_JITTER_MIN_MS } from '@/lib/upstream/budget';

export interface ShipStationHttpOptions {
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  budget?: ShipStationRateBudget;
}

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const MAX_ATTEMPTS = 2;

export class ShipStationHttp {
  readonly now: () => number;
  private readonly budget: ShipStationRateBudget;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly timeoutMs: number,
    private readonly headers: Record<string, string>,
    options: ShipStationHttpOptions = {},
    perMinute?: number,
  ) {
    this.fetchImpl = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.budget = options.budget ?? new MemoryShipStationRateBudget(this.now, perMinute);
  }

  async getJson(url: URL): Promise<unknown> {
    const deadline = this.now() + Math.min(this.timeoutMs, requestTimeLeftMs());
    let retriedTransient = false;
    const retryTransient = async (): Promise<boolean> => {
      if (retriedTransient) return false;
      const pause = RETRY_JITTER_MIN_MS + Math.floor(Math.random() * (RETRY_JITTER_MAX_MS - RETRY_JITTER_MIN_MS));
      if (requestTimeLeftMs() - pause < MIN_ATTEMPT_MS) return false;
      retriedTransient = true;
      await this.sleep(pause);
      return true;
    };
    for (let attempt = 1; ; attempt += 1) {
      await this.takeBudget(deadline);
      const timeoutMs = attemptTimeoutMs(this.timeoutMs);
      if (timeoutMs === 0) throw new ShipStationError('timeout', undefined);
      let response: Response;
      try {
        response = await this.fetchImpl(url, {
          method: 'GET',
          headers: { ...this.headers, Accept: 'application/json' },
          // Unlike redirect: 'error' (a network error), a 3xx is never mistaken for a failure worth a retry.
          redirect: 'manual',
          cache: 'no-store',
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
        if (await retryTransient()) continue;
        throw new ShipStationError(timedOut ? 'timeout' : 'unavailable', undefined);
      }

      if (response.status === 429) {
        await this.budget.throttled(response.headers);
        discard(response);
        if (attempt < MAX_ATTEMPTS) continue;
        throw new ShipStationError('rate_limited', 429);
      }
      await this.budget.observe(response.headers);
      if (!response.ok) {
        discard(response);
        if (response.status >= 500 && (await retryTransient())) continue;
        throw new ShipStationError(response.status >= 500 ? 'unavailable' : 'rejected', response.status);
      }
      return readJson(response);
    }
  }

  private async takeBudget(deadline: number): Promise<void> {
    for (;;) {
      const wait = await this.budget.reserve();
      if (wait === 0) return;
      if (this.now() + wait > deadline) throw new ShipStationError('rate_limited', undefined);
      await this.sleep(wait);
    }
  }
}

async function readJson(response: Response): Promise<unknown> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
    discard(response);
    throw new ShipStationError('bad_response', response.status);
  }
  let text: string | undefined;
  try {
    text = await readStreamText(response.body, MAX_RESPONSE_BYTES);
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw new ShipStationError(timedOut ? 'timeout' : 'unavailable', response.status);
  }
  if (text === undefined) throw new ShipStationError('bad_response', response.status);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ShipStationError('bad_response', response.status);
  }
}

/** Drops a body that will not be read, without waiting on the sender. */
function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}
