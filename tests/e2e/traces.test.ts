/**
 * Traces over OTLP from the production build (`next start`): with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local receiver, one card checkout
 * (payment intent, then Stripe's webhook) arrives as spans: one per request
 * with route, status, order id and event id, a child span for each store and
 * card provider call with its outcome, and no customer data anywhere.
 *
 * @vercel/otel exports http/protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL says
 * otherwise; the receiver here reads OTLP/HTTP JSON, so the service is started
 * with `http/json` (the same exporter path, a body a test can read).
 */
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_SECRETS } from '@/stand-ins/demo/world';
import { LOOPBACK } from '@/stand-ins/loopback-http';
import { cardEvent, deliverCardEvent } from '@/stand-ins/webhook-deliveries';
import { demoToken, e2eIp, startE2eWorld, type E2eWorld } from '../support/e2e';

const STOREFRONT = 'https://storefront.e2e.test';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  statusCode: number;
}

/** OTLP's AnyValue, reduced to a plain value. */
function plain(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  return value;
}

/** A tiny OTLP/HTTP JSON receiver: POST /v1/traces, answered as a collector would. */
function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; paths: string[]; server: Server }> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
      let raw = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      try {
        const body = JSON.parse(raw.toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: Record<string, any>[] }[] }[] };
        for (const resource of body.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                attributes: Object.fromEntries((span.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [a.key, plain(a.value)])),
                statusCode: span.status?.code ?? 0,
              });
            }
          }
        }
      } catch {
        // Not JSON: recorded in `paths` only, and the assertions below will say what arrived.
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({ url: `http://${LOOPBACK}:${port}`, spans, paths, server });
    });
  });
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let world: E2eWorld;

beforeAll(async () => {
  receiver = await startReceiver();
  world = await startE2eWorld('traces', {
    allowedOrigins: [STOREFRONT],
    extraEnv: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'checkout-e2e',
      // Export within a fraction of a second instead of the batch processor's default 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  });
});

afterAll(async () => {
  await world?.close();
  await new Promise((resolve) => receiver?.server.close(resolve));
});

async function spansUntil(found: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (found(receiver.spans)) return receiver.spans;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`spans did not arrive: ${JSON.stringify(receiver.paths)} ${receiver.spans.map((s) => s.name).join(', ')}`);
}

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId && span.name.match(/^(store|card|shipstation) /));

it('one card checkout is exported as request spans with their store and card calls as children', async () => {
  const intentResponse = await fetch(`${world.service.url}/api/payment-intent`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: STOREFRONT, 'X-Forwarded-For': e2eIp() },
    body: JSON.stringify({
      token: await demoToken(1001),
      billing_address: { first_name: 'Grace', last_name: 'Hopper', address_1: '1 Harbor Way', city: 'Arlington', postcode: '22201', country: 'US' },
      shipping_address: null,
      contact_info: { email: 'grace@example.com', phone: '+1 555 0100' },
    }),
  });
  expect(intentResponse.status).toBe(200);
  const { payment_intent_id: intentId } = (await intentResponse.json()) as { payment_intent_id: string };
  const event = cardEvent('payment_intent.succeeded', world.standIns.stripe.model.succeed(intentId));
  expect(await deliverCardEvent(world.service.url, event, DEMO_SECRETS.stripeWebhookSecret)).toEqual({ status: 200, body: { received: true } });

  const spans = await spansUntil(
    (all) => all.some((s) => s.name === 'request /api/payment-intent') && all.some((s) => s.name === 'request /api/cardprovider/webhook'),
  );
  expect(receiver.paths[0]).toMatch(/^POST \/v1\/traces application\/json/);

  const intentRequest = spans.find((s) => s.name === 'request /api/payment-intent')!;
  expect(intentRequest.attributes).toMatchObject({
    'http.route': '/api/payment-intent',
    'http.response.status_code': 200,
    'checkout.order_id': 1001,
    'checkout.outcome': 'ok',
  });
  expect(childrenOf(spans, intentRequest).map((s) => [s.name, s.attributes['checkout.outcome']])).toEqual([
    ['store get order', 'ok'],
    ['card create payment intent', 'ok'],
    ['store update order', 'ok'],
  ]);

  const webhookRequest = spans.find((s) => s.name === 'request /api/cardprovider/webhook')!;
  expect(webhookRequest.attributes).toMatchObject({
    'http.route': '/api/cardprovider/webhook',
    'http.response.status_code': 200,
    'checkout.order_id': 1001,
    'checkout.event_id': event.id,
    'checkout.event_type': 'payment_intent.succeeded',
  });
  const webhookCalls = childrenOf(spans, webhookRequest).map((s) => s.name);
  expect(webhookCalls[0]).toBe('store get order');
  expect(webhookCalls).toContain('store update order');

  // Identifiers and outcomes only: nothing the customer typed, no token, no secret.
  const everyValue = JSON.stringify(spans.map((s) => s.attributes));
  for (const personal of ['grace@example.com', 'Hopper', 'Harbor Way', '555 0100', 'eyJ', 'whsec_', '_secret_']) {
    expect(everyValue).not.toContain(personal);
  }
});
