/**
 * The Stripe SDK's HTTP client: Node's http client on the process's keep-alive
 * agents (lib/upstream/node-http.ts), with `timeout` bounding the whole call.
 *
 * The SDK's own Node client costs a third of its fetch client per call
 * (docs/benchmarks-history.md), but its timeout only bounds socket idleness: an
 * upstream that keeps sending a byte now and then holds a call, its socket and
 * its promise open for as long as it likes. Here the request is destroyed when
 * the time is up, whether the answer's headers have arrived or not, so an
 * abandoned call (lib/card/stripe.ts gives up on it at the same bound) frees
 * its socket. The rest follows the SDK's NodeHttpClient: the same request,
 * with Node's default TLS ciphers, and the body read and parsed the same way.
 */
import type { IncomingMessage } from 'node:http';
import Stripe from 'stripe';
import { clientFor } from '@/lib/upstream/node-http';

type RequestHeaders = Parameters<InstanceType<typeof Stripe.HttpClient>['makeRequest']>[4];

class BoundedResponse extends Stripe.HttpClientResponse {
  constructor(
    private readonly answer: IncomingMessage,
    private readonly timedOut: () => boolean,
    private readonly done: () => void,
  ) {
    super(answer.statusCode ?? 0, answer.headers as Record<string, string>);
  }

  override getRawResponse(): IncomingMessage {
    return this.answer;
  }

  override toStream(streamCompleteCallback: () => void): IncomingMessage {
    this.answer.once('end', () => {
      this.done();
      streamCompleteCallback();
    });
    return this.answer;
  }

  override toJSON(): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const fail = (error: unknown) => {
        this.done();
        reject(Stripe.HttpClient.makeResponseBodyError(this.timedOut() ? Stripe.HttpClient.makeTimeoutError() : error));
      };
      let text = '';
      this.answer.setEncoding('utf8');
      this.answer.on('data', (chunk: string) => {
        text += chunk;
      });
      this.answer.on('error', fail);
      this.answer.once('close', () => {
        if (!this.answer.complete) fail(null);
      });
      this.answer.once('end', () => {
        this.done();
        try {
          resolve(this._parseResponseBody(text));
        } catch (error) {
          reject(error);
        }
      });
    });
  }
}

export class BoundedNodeHttpClient extends Stripe.HttpClient {
  override getClientName(): string {
    return 'node';
  }

  override makeRequest(
    host: string,
    port: string,
    path: string,
    method: string,
    headers: RequestHeaders,
    requestData: string,
    protocol: string,
    timeout: number,
  ): Promise<BoundedResponse> {
    return new Promise((resolve, reject) => {
      const { request, agent } = clientFor(protocol !== 'http');
      let timedOut = false;
      const outgoing = request({
        host,
        port,
        path,
        method,
        agent,
        headers: headers as Record<string, string>,
      });
      // The whole call, not its idleness: the answer's body included.
      const timer = setTimeout(() => {
        timedOut = true;
        outgoing.destroy(Stripe.HttpClient.makeTimeoutError());
      }, timeout);
      const done = () => clearTimeout(timer);
      outgoing.once('response', (answer: IncomingMessage) => resolve(new BoundedResponse(answer, () => timedOut, done)));
      outgoing.on('error', (error) => {
        done();
        reject(error);
      });
      outgoing.end(requestData);
    });
  }
}
