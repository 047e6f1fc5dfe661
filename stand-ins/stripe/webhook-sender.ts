/**
 * The Stripe stand-in's webhook endpoint: what Stripe does after a payment
 * attempt, by itself. Each event is signed with the endpoint's secret (the
 * `Stripe-Signature` header, t=…,v1=HMAC-SHA256) and posted as JSON; a
 * delivery that does not get a 2xx is retried a bounded number of times with
 * growing delays, as Stripe retries a sandbox endpoint three times (over
 * hours there, over seconds here). The same event id is kept across retries,
 * so the receiver's exactly-once guard is what is exercised.
 *
 * Not part of the production bundle.
 */
import type { ConfirmOutcome } from './model';
import { cardEvent, signCardEvent } from '../webhook-deliveries';

export interface WebhookEndpoint {
  /** Where Stripe posts, e.g. http://127.0.0.1:3000/api/stripe/webhook */
  url: string;
  /** The endpoint's signing secret (whsec_…), as the service has it in STRIPE_WEBHOOK_SECRET. */
  secret: string;
}

export interface WebhookAttempt {
  eventId: string;
  type: string;
  attempt: number;
  /** The HTTP status the endpoint answered, or 0 when it could not be reached. */
  status: number;
}

/** Three retries, as Stripe's sandbox does, compressed from hours to seconds for the demo. */
export const DEMO_RETRY_DELAYS_MS = [1000, 3000, 9000];
const ATTEMPT_TIMEOUT_MS = 10_000;

export class StripeWebhookSender {
  endpoint: WebhookEndpoint | undefined;
  /** Every delivery attempt, oldest first (the demo and the tests read it). */
  readonly attempts: WebhookAttempt[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly waits = new Map<NodeJS.Timeout, () => void>();
  private stopped = false;

  constructor(private readonly retryDelaysMs: number[] = DEMO_RETRY_DELAYS_MS) {}

  /** Turns a confirmation's outcome into a Stripe event and delivers it, when an endpoint is configured. */
  publish(outcome: ConfirmOutcome): string | undefined {
    const endpoint = this.endpoint;
    if (!endpoint || this.stopped) return undefined;
    const event = cardEvent(outcome.type, outcome.intent, outcome.eventId);
    const delivery = this.deliver(endpoint, event);
    this.inFlight.add(delivery);
    void delivery.finally(() => this.inFlight.delete(delivery));
    return event.id;
  }

  /** Resolves once every delivery has succeeded or run out of retries. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops retrying (the stand-in is closing). */
  stop(): void {
    this.stopped = true;
    for (const [timer, wake] of this.waits) {
      clearTimeout(timer);
      wake();
    }
    this.waits.clear();
  }

  private async deliver(endpoint: WebhookEndpoint, event: ReturnType<typeof cardEvent>): Promise<void> {
    for (let attempt = 1; attempt <= this.retryDelaysMs.length + 1 && !this.stopped; attempt += 1) {
      if (attempt > 1) await this.sleep(this.retryDelaysMs[attempt - 2] ?? 0);
      if (this.stopped) return;
      // Signed at each attempt, as Stripe does: the timestamp is the attempt's.
      const { payload, signature } = signCardEvent(event, endpoint.secret);
      let status = 0;
      try {
        const response = await fetch(endpoint.url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json; charset=utf-8',
            'Stripe-Signature': signature,
            'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          },
          body: payload,
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        });
        status = response.status;
        await response.body?.cancel();
      } catch {
        status = 0;
      }
      this.attempts.push({ eventId: event.id, type: event.type, attempt, status });
      if (status >= 200 && status < 300) return;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waits.delete(timer);
        resolve();
      }, ms);
      this.waits.set(timer, resolve);
    });
  }
}
