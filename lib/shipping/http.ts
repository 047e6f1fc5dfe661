/**
 * One GET to ShipStation (V1 or V2) on the one transport, within the account's rate budget and the request's
 * deadline (docs/decisions.md#d34); a transient failure retried once, a 429 waited out once when it fits.
 */
import { z } from 'zod';
import { ShipStationError } from '@/lib/errors';
import { MemoryShipStationRateBudget, type ShipStationRateBudget } from '@/lib/shared-state/shipstation-budget';
import { checkResourceUrl } from '@/lib/shipping/resource-url';
import { traceCall } from '@/lib/telemetry';
import { attemptTimeoutMs, requestTimeLeftMs, withOneRetry } from '@/lib/upstream/budget';
import { send, type UpstreamAnswer } from '@/lib/upstream/node-http';

export interface ShipStationHttpOptions {
  send?: typeof send;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  budget?: ShipStationRateBudget;
}

/** A text field of either API or webhook, trimmed and bounded; absent when empty. */
export const boundedText = (max: number) =>
  z
    .union([z.string(), z.number()])
    .nullish()
    .transform((v) => (v === null || v === undefined ? undefined : String(v).trim().slice(0, max) || undefined));
export const optionalText = boundedText(200);

export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const TRANSIENT: string[] = ['timeout', 'unavailable'];

function webHeaders(headers: UpstreamAnswer['headers']): Headers {
  const present = Object.entries(headers).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined);
  return new Headers(present.map(([name, value]): [string, string] => [name, Array.isArray(value) ? value.join(', ') : value]));
}

export class ShipStationHttp {
  readonly now: () => number;
  private readonly budget: ShipStationRateBudget;
  private readonly send: typeof send;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly timeoutMs: number,
    private readonly headers: Record<string, string>,
    readonly apiBaseUrl: string,
    options: ShipStationHttpOptions = {},
    perMinute?: number,
  ) {
    this.send = options.send ?? send;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.budget = options.budget ?? new MemoryShipStationRateBudget(this.now, perMinute);
  }

  /** The URL if the service may read it (lib/shipping/resource-url.ts), else a ShipStationError naming why. */
  allowed(resourceUrl: string): URL {
    const check = checkResourceUrl(resourceUrl, this.apiBaseUrl);
    if (!check.allowed) throw new ShipStationError(check.reason, undefined, check.origin);
    return check.url;
  }

  async getJson(url: URL, operation: string): Promise<unknown> {
    const deadline = this.now() + Math.min(this.timeoutMs, requestTimeLeftMs());
    return traceCall('shipstation', operation, async () => {
      const answer = await withOneRetry(() => this.attempt(url, deadline), {
        perAttemptMs: this.timeoutMs,
        retriable: (error) => error instanceof ShipStationError && (error.status === 429 || TRANSIENT.includes(error.failure)),
        // After a 429 the budget itself waits for the window ShipStation named.
        pauseMs: (error) => ((error as ShipStationError).status === 429 ? 0 : undefined),
        outOfTime: () => new ShipStationError('timeout', undefined),
        sleep: this.sleep,
      });
      try {
        return JSON.parse(answer.body.toString('utf8')) as unknown;
      } catch {
        throw new ShipStationError('bad_response', answer.status);
      }
    });
  }

  private async attempt(url: URL, deadline: number): Promise<UpstreamAnswer> {
    for (let wait = await this.budget.reserve(); wait > 0; wait = await this.budget.reserve()) {
      if (this.now() + wait > deadline) throw new ShipStationError('rate_limited', undefined);
      await this.sleep(wait);
    }
    const timeoutMs = attemptTimeoutMs(this.timeoutMs);
    if (timeoutMs === 0) throw new ShipStationError('timeout', undefined);
    let answer: UpstreamAnswer;
    try {
      const headers = { ...this.headers, Accept: 'application/json' };
      answer = await this.send({ url, method: 'GET', headers, timeoutMs, maxBytes: MAX_RESPONSE_BYTES });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const failure = code === 'ECONNABORTED' ? 'timeout' : code === 'ERR_ANSWER_TOO_LARGE' ? 'bad_response' : 'unavailable';
      throw new ShipStationError(failure, undefined);
    }
    const headers = webHeaders(answer.headers);
    if (answer.status === 429) {
      await this.budget.throttled(headers);
      throw new ShipStationError('rate_limited', 429);
    }
    await this.budget.observe(headers);
    // A 3xx is an answer like any other outside 2xx: never followed, so the credentials stay with ShipStation.
    if (answer.status < 200 || answer.status >= 300) {
      throw new ShipStationError(answer.status >= 500 ? 'unavailable' : 'rejected', answer.status);
    }
    return answer;
  }
}
