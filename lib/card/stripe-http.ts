/**
 * The Stripe SDK's HTTP client on the process's keep-alive agents. As the SDK's NodeHttpClient (a third of
 * its fetch client's cost, docs/benchmarks-history.md), but `timeout` bounds the whole call, not socket
 * idleness, so an upstream trickling bytes cannot hold a socket open.
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
