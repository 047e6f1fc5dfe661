/**
 * The store's calls bound to their action (docs/decisions.md#d15): the signature covers the method
 * and the path the request came to, the bodies are strict, and a signed call replayed within the
 * five minutes changes nothing a second time.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntentPOST } from '@/app/api/payment-intent/route';
import { signStoreCallback } from '@/lib/security/store-signature';
import { paidOrder } from '../support/card-events';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { callStore, STORE_ROUTES, storeRequest, storeSignatureFor, TEST_STORE_CALLBACK_SECRET, type StoreRoute } from '../support/store-callbacks';

const providers = useProviders();

beforeEach(() => {
  useTestEnv({ STORE_CALLBACK_SECRET: TEST_STORE_CALLBACK_SECRET, STRIPE_CAPTURE: 'manual', CARD_LIFECYCLE_EVENTS: 'refunds' });
  providers.reset();
});

/** A pending order of 27.50 whose customer authorized the card (manual capture). */
async function authorizedOrder(orderId: number): Promise<string> {
  providers.woo.seed({ id: orderId, lines: [{ total: '27.50' }] });
  const response = await paymentIntentPOST(postJson('/api/payment-intent', { token: await tokenFor(orderId) }));
  expect(response.status).toBe(200);
  const intentId = ((await response.json()) as { payment_intent_id: string }).payment_intent_id;
  providers.stripe.authorize(intentId);
  return intentId;
}

const UNAUTHORIZED = { status: 401, body: { error: 'Unauthorized' } };
const ROUTES = Object.keys(STORE_ROUTES) as StoreRoute[];
const captureCalls = () => providers.callsTo('card', 'POST', /\/capture$/);
const cancelCalls = () => providers.callsTo('card', 'POST', /\/cancel$/);
const refundCreates = () => providers.callsTo('card', 'POST', /^\/v1\/refunds$/);
const storeWrites = () => providers.callsTo('store').filter((call) => call.method !== 'GET');

function bodyFor(route: StoreRoute, orderId: number): Record<string, unknown> {
  return route === 'refunds' ? { order_id: orderId, refund_id: 1, amount: '5.00', reason: '' } : { order_id: orderId };
}

/** The same signed request twice, as someone who saw it on the wire would replay it: same header, same bytes. */
async function sendTwice(route: StoreRoute, body: unknown) {
  const header = storeSignatureFor(route, body);
  const answers = [];
  for (let i = 0; i < 2; i += 1) {
    const response = await STORE_ROUTES[route].POST(storeRequest(route, body, { header }));
    answers.push({ status: response.status, body: await response.json() });
  }
  return answers;
}

describe('a signed body works only for the action it was signed for', () => {
  it('a cancel-authorization signed for a cancelled order, sent to capture, is refused and nothing is captured', async () => {
    const intentId = await authorizedOrder(2601);
    providers.woo.orders.get(2601)!.status = 'cancelled';
    const body = { order_id: 2601 };
    const header = storeSignatureFor('cancelAuthorization', body);
    providers.calls.length = 0;

    expect(await callStore('capture', body, { header })).toEqual(UNAUTHORIZED);
    expect(providers.calls).toEqual([]);
    expect(providers.stripe.retrieve(intentId).status).toBe('requires_capture');

    // The same header is good where it was meant to go: the authorization is released.
    expect(await callStore('cancelAuthorization', body, { header })).toEqual({ status: 200, body: { canceled: true } });
    expect(captureCalls()).toEqual([]);
  });

  it('a refund signed for the refunds route, sent to cancel-authorization, is refused', async () => {
    const intentId = await authorizedOrder(2602);
    providers.calls.length = 0;

    expect(await callStore('cancelAuthorization', bodyFor('refunds', 2602), { signedFor: 'refunds' })).toEqual(UNAUTHORIZED);
    expect(providers.calls).toEqual([]);
    expect(providers.stripe.retrieve(intentId).status).toBe('requires_capture');
  });

  for (const signedFor of ROUTES) {
    for (const sentTo of ROUTES.filter((route) => route !== signedFor)) {
      it(`a call signed for ${STORE_ROUTES[signedFor].path} is 401 at ${STORE_ROUTES[sentTo].path}, before anything is asked`, async () => {
        await authorizedOrder(2610);
        providers.calls.length = 0;

        expect(await callStore(sentTo, bodyFor(signedFor, 2610), { signedFor })).toEqual(UNAUTHORIZED);
        expect(providers.calls).toEqual([]);
      });
    }
  }

  it('a header with only the body-only v1 of plugins before 1.3.0 is 401', async () => {
    await authorizedOrder(2603);
    const v1Only = storeSignatureFor('capture', { order_id: 2603 }).replace('v2=', 'v1=');
    providers.calls.length = 0;

    expect(await callStore('capture', { order_id: 2603 }, { header: v1Only })).toEqual(UNAUTHORIZED);
    expect(providers.calls).toEqual([]);
  });
});

describe('the path signed is the one the request came to', () => {
  it('under a prefix the service sees, the prefixed path is what must be signed; the query string is not', async () => {
    await authorizedOrder(2641);
    const rawBody = JSON.stringify({ order_id: 2641 });
    const at = (path: string, signedPath: string) =>
      STORE_ROUTES.capture.POST(
        new Request(`http://localhost:3000${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-store-signature': signStoreCallback({ method: 'POST', path: signedPath, rawBody }, TEST_STORE_CALLBACK_SECRET) },
          body: rawBody,
        }),
      );

    expect((await at('/checkout/api/store/capture', '/api/store/capture')).status).toBe(401);
    expect(captureCalls()).toEqual([]);
    expect((await at('/checkout/api/store/capture?attempt=2', '/checkout/api/store/capture')).status).toBe(200);
    expect(captureCalls()).toHaveLength(1);
  });
});

describe('strict bodies', () => {
  it('an unknown key is a 400 Invalid request, correctly signed or not for the route, and nothing is asked', async () => {
    const intentId = await authorizedOrder(2621);
    providers.calls.length = 0;

    for (const route of ['capture', 'cancelAuthorization'] as const) {
      const answer = await callStore(route, bodyFor('refunds', 2621));
      expect(answer).toEqual({
        status: 400,
        body: { error: 'Invalid request', details: [expect.objectContaining({ code: 'unrecognized_keys', keys: ['refund_id', 'amount', 'reason'] })] },
      });
    }
    const refund = await callStore('refunds', { ...bodyFor('refunds', 2621), currency: 'usd' });
    expect(refund).toEqual({ status: 400, body: { error: 'Invalid request', details: [expect.objectContaining({ code: 'unrecognized_keys', keys: ['currency'] })] } });
    expect(providers.calls).toEqual([]);
    expect(providers.stripe.retrieve(intentId).status).toBe('requires_capture');
  });
});

describe('a signed call replayed within the tolerance changes nothing a second time', () => {
  it('capture: the same answer, one capture at Stripe, nothing written', async () => {
    await authorizedOrder(2631);
    providers.calls.length = 0;

    const [first, second] = await sendTwice('capture', { order_id: 2631 });

    expect(first).toEqual({ status: 200, body: { captured: '27.50' } });
    expect(second).toEqual(first);
    expect(captureCalls()).toHaveLength(1);
    expect(storeWrites()).toEqual([]);
  });

  it('cancel-authorization: the same answer, one cancellation at Stripe, nothing written', async () => {
    await authorizedOrder(2632);
    providers.calls.length = 0;

    const [first, second] = await sendTwice('cancelAuthorization', { order_id: 2632 });

    expect(first).toEqual({ status: 200, body: { canceled: true } });
    expect(second).toEqual(first);
    expect(cancelCalls()).toHaveLength(1);
    expect(storeWrites()).toEqual([]);
  });

  it('refunds: the same answer, one refund at Stripe, nothing written', async () => {
    await paidOrder(providers, 2633);
    const saved = providers.woo.createRefund(2633, { amount: '5.00', api_refund: false });
    providers.calls.length = 0;

    const [first, second] = await sendTwice('refunds', { order_id: 2633, refund_id: saved.id, amount: '5.00', reason: '' });

    expect(first).toEqual({ status: 200, body: { refund_id: expect.stringMatching(/^re_/), amount: '5.00' } });
    expect(second).toEqual(first);
    expect(refundCreates()).toHaveLength(1);
    expect(providers.stripe.refunds.size).toBe(1);
    expect(storeWrites()).toEqual([]);
  });
});
