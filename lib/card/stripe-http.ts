/**
 * The Stripe SDK, built here only, on the one transport (lib/upstream/node-http.ts): `timeout` bounds the whole call,
 * the answer's body included, so an upstream trickling bytes cannot hold a socket open (docs/benchmarks.md).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import Stripe from 'stripe';
import type { CardSettings } from '@/lib/config';
import { CardProviderError, UpstreamHttpError } from '@/lib/errors';
import { send } from '@/lib/upstream/node-http';

type MakeRequest = InstanceType<typeof Stripe.HttpClient>['makeRequest'];

class ReadResponse extends Stripe.HttpClientResponse {
  constructor(
    status: number,
    private readonly headers: IncomingHttpHeaders,
    private readonly body: Buffer,
  ) {
    super(status, headers as Record<string, string>);
  }

  override getRawResponse(): { headers: IncomingHttpHeaders } {
    return { headers: this.headers };
  }

  override toStream(streamCompleteCallback: () => void): Readable {
    return Readable.from([this.body]).once('end', streamCompleteCallback);
  }

  override toJSON(): Promise<unknown> {
    return new Promise((resolve) => resolve(this._parseResponseBody(this.body.toString('utf8'))));
  }
}

export class BoundedNodeHttpClient extends Stripe.HttpClient {
  override getClientName(): string {
    return 'node';
  }

  override async makeRequest(...args: Parameters<MakeRequest>): Promise<ReadResponse> {
    const [host, port, path, method, headers, requestData, protocol, timeout] = args;
    const url = new URL(`${protocol === 'http' ? 'http' : 'https'}://${host}:${port}${path}`);
    try {
      const body = requestData || undefined;
      const answer = await send({ url, method, headers: headers as Record<string, string>, body, timeoutMs: timeout });
      return new ReadResponse(answer.status, answer.headers, answer.body);
    } catch (error) {
      // The SDK reads the code: a timeout becomes its own timeout error, a closed connection is retried once.
      const code = error instanceof UpstreamHttpError ? error.code : undefined;
      throw code === 'ECONNABORTED' ? Stripe.HttpClient.makeTimeoutError() : Object.assign(new Error('Stripe request failed'), { code });
    }
  }
}

/** `retries`: the SDK's own network retries (the card provider keeps 0: they would run past the request's deadline). */
export function stripeSdk(settings: Pick<CardSettings, 'secretKey' | 'apiBaseUrl'>, timeoutMs: number, retries: number): Stripe {
  const base = settings.apiBaseUrl ? new URL(settings.apiBaseUrl) : undefined;
  const http = base?.protocol === 'http:';
  return new Stripe(settings.secretKey, {
    // fetch cost about 0.5 ms of CPU more per call (docs/benchmarks.md).
    httpClient: new BoundedNodeHttpClient(),
    timeout: timeoutMs,
    maxNetworkRetries: retries,
    telemetry: false,
    appInfo: { name: 'checkout-payment-service' },
    ...(base ? { protocol: http ? 'http' : 'https', host: base.hostname, port: base.port || (http ? 80 : 443) } : {}),
  });
}

/** Stripe's type, status and code, never its message. */
export function toCardError(operation: string, error: unknown): CardProviderError {
  if (error instanceof Stripe.errors.StripeError) return new CardProviderError(operation, error.type, error.statusCode, error.code);
  return new CardProviderError(operation, 'unknown', undefined, undefined);
}
