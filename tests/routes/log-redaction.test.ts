/**
 * What the logs must never hold: tokens, secrets, emails, phone numbers and
 * addresses are fed through every endpoint, on success and failure paths, and
 * the whole captured log output is searched for each of them.
 */
import Stripe from 'stripe';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as CARD_WEBHOOK } from '@/app/api/cardprovider/webhook/route';
import { GET as RECONCILE } from '@/app/api/cron/reconcile-payments/route';
import { GET as RETRY_SHIPPING } from '@/app/api/cron/retry-shipping/route';
import { GET as HEALTH } from '@/app/api/health/route';
import { OPTIONS, POST as PAYMENT_INTENT } from '@/app/api/payment-intent/route';
import { POST as SHIPPING_WEBHOOK } from '@/app/api/shipping/webhook/route';
import { POST as SUBMIT_ORDER } from '@/app/api/submit-order/route';
import {
  TEST_CONSUMER_KEY,
  TEST_CONSUMER_SECRET,
  TEST_CRON_SECRET,
  TEST_STRIPE_KEY,
  TEST_TOKEN_SECRET,
  TEST_WEBHOOK_SECRET,
  useTestEnv,
} from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();
const SHIPPING_SECRET = 'shipping-secret-for-redaction-9f8e7d';

beforeEach(() => {
  useTestEnv({ CRON_SECRET: TEST_CRON_SECRET, SHIPPING_WEBHOOK_SECRET: SHIPPING_SECRET });
  providers.reset();
});

const EMAIL = 'ada.lovelace@example.org';
const PHONE = '+44 20 7946 0123';
const STREET = '12 Analytical Engine Row';
const POSTCODE = 'N1 7ZZ';
const SURNAME = 'Lovelacington';
const address = { first_name: 'Ada', last_name: SURNAME, address_1: STREET, city: 'London', postcode: POSTCODE, country: 'GB' };
const contact = { email: EMAIL, phone: PHONE };

function signed(event: unknown, secret = TEST_WEBHOOK_SECRET): Request {
  const payload = JSON.stringify(event);
  return new Request('http://localhost:3000/api/cardprovider/webhook', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': '10.9.9.9',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }),
      'x-request-id': EMAIL,
    },
    body: payload,
  });
}

function intentEvent(type: string, orderId: number, extra: Record<string, unknown> = {}) {
  return {
    id: `evt_redact_${type}_${orderId}`,
    object: 'event',
    created: Math.floor(Date.now() / 1000),
    type,
    data: {
      object: {
        id: `pi_redact_${orderId}`,
        object: 'payment_intent',
        amount: 1000,
        currency: 'usd',
        metadata: { shop_order_id: String(orderId) },
        receipt_email: EMAIL,
        shipping: { name: `Ada ${SURNAME}`, phone: PHONE, address: { line1: STREET, postal_code: POSTCODE } },
        last_payment_error: { message: `Card of ${EMAIL} declined`, payment_method: { billing_details: { email: EMAIL, phone: PHONE } } },
        ...extra,
      },
    },
  };
}

const cron = (handler: (r: Request) => Promise<Response>, path: string, authorization: string) =>
  handler(new Request(`http://localhost:3000${path}`, { headers: { authorization, 'x-request-id': PHONE } }));

describe('log redaction', () => {
  it('no token, secret, email, phone number or address reaches a log line, through every endpoint', async () => {
    providers.woo.seed({ id: 601, total: '10.00', billing: { ...address, ...contact }, customer_id: 5 });
    providers.woo.seed({ id: 602, total: '10.00', billing: { ...address, ...contact } });
    providers.woo.seed({ id: 603, status: 'processing', shipping: address });
    providers.woo.seed({ id: 604, total: '99.00' });
    const token = await tokenFor(601);
    const expiredToken = await tokenFor(602, 1).then(async (t) => {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      return t;
    });
    const responses: Response[] = [];
    const body = { token, billing_address: address, shipping_address: address, contact_info: contact };

    // Checkout: success, invalid body, bad token, expired token, wrong origin, preflight, store failure.
    responses.push(await PAYMENT_INTENT(postJson('/api/payment-intent', body)));
    responses.push(await PAYMENT_INTENT(postJson('/api/payment-intent', { ...body, contact_info: { email: `not-an-email ${EMAIL}x`, phone: PHONE } })));
    responses.push(await PAYMENT_INTENT(postJson('/api/payment-intent', { ...body, token: `${token}tampered` })));
    responses.push(await PAYMENT_INTENT(postJson('/api/payment-intent', { ...body, token: expiredToken })));
    responses.push(await PAYMENT_INTENT(postJson('/api/payment-intent', body, { origin: `https://${EMAIL.replace('@', '.')}` })));
    responses.push(
      await OPTIONS(new Request('http://localhost:3000/api/payment-intent', { method: 'OPTIONS', headers: { origin: 'https://storefront.test', 'x-request-id': EMAIL } })),
    );
    responses.push(await SUBMIT_ORDER(postJson('/api/submit-order', { ...body, token: await tokenFor(602) })));
    providers.failStore('PUT', /\/orders\/602$/, 500, 'internal_server_error');
    responses.push(await SUBMIT_ORDER(postJson('/api/submit-order', { ...body, token: await tokenFor(602), shipping_address: null })));
    responses.push(await SUBMIT_ORDER(postJson('/api/submit-order', '{"token": "' + token + '", "billing_address": ' + `"${STREET}"` + '}')));

    // Card webhook: success, amount mismatch, failure, bad signature, malformed JSON, unknown type.
    responses.push(await CARD_WEBHOOK(signed(intentEvent('payment_intent.succeeded', 601))));
    responses.push(await CARD_WEBHOOK(signed(intentEvent('payment_intent.succeeded', 604))));
    responses.push(await CARD_WEBHOOK(signed(intentEvent('payment_intent.payment_failed', 602))));
    responses.push(await CARD_WEBHOOK(signed(intentEvent('payment_intent.succeeded', 601), 'whsec_wrong_secret_guess')));
    responses.push(await CARD_WEBHOOK(signed(`{"id": "evt_1", "email": "${EMAIL}", `)));
    responses.push(await CARD_WEBHOOK(signed({ ...intentEvent('customer.updated', 601), type: 'customer.updated' })));

    // Shipping webhook: wrong secret, success, invalid payload, store failure queued for replay.
    const ship = (payload: unknown, secret = SHIPPING_SECRET) =>
      SHIPPING_WEBHOOK(postJson(`/api/shipping/webhook?secret=${encodeURIComponent(secret)}`, payload, { origin: null }));
    responses.push(await ship({ resource_type: 'SHIP_NOTIFY', order_number: '603' }, `${SHIPPING_SECRET}-guess`));
    providers.failStore('PUT', /\/orders\/603$/, 503, 'internal_server_error');
    responses.push(await ship({ resource_type: 'SHIP_NOTIFY', order_number: '603', tracking_number: `1Z ${PHONE}`, carrier: EMAIL }));
    responses.push(await ship({ resource_type: 'SHIP_NOTIFY', order_number: { email: EMAIL }, tracking_number: STREET, carrier: 7 }));
    responses.push(await ship(`not json ${EMAIL} ${STREET}`));

    // Cron routes and health: wrong and right tokens.
    responses.push(await cron(RECONCILE, '/api/cron/reconcile-payments', `Bearer ${TEST_CRON_SECRET}-guess`));
    providers.stripe.succeed(providers.stripe.create({ amount: '1000', currency: 'usd', metadata: { shop_order_id: '602' }, receipt_email: EMAIL }).id);
    responses.push(await cron(RECONCILE, '/api/cron/reconcile-payments', `Bearer ${TEST_CRON_SECRET}`));
    responses.push(await cron(RETRY_SHIPPING, '/api/cron/retry-shipping', `Bearer ${TEST_CRON_SECRET}`));
    responses.push(await cron(HEALTH, '/api/health', `Bearer ${TEST_CRON_SECRET}`));
    responses.push(await cron(HEALTH, '/api/health', `Bearer ${TEST_STRIPE_KEY}`));

    // The paths ran: successes and failures both happened.
    const statuses = responses.map((r) => r.status);
    expect(statuses).toEqual(expect.arrayContaining([200, 204, 400, 401, 500]));
    expect(providers.woo.get(601).status).toBe('processing');
    expect(['shipped', 'completed']).toContain(providers.woo.get(603).status);

    const output = loggedLines()
      .map((line) => JSON.stringify(line))
      .join('\n');
    expect(output.length).toBeGreaterThan(1000);
    const clientSecrets = [...providers.stripe.intents.values()].map((intent) => intent.client_secret);
    const forbidden = [
      token,
      token.split('.')[2] as string,
      expiredToken,
      TEST_TOKEN_SECRET,
      TEST_WEBHOOK_SECRET,
      TEST_CONSUMER_KEY,
      TEST_CONSUMER_SECRET,
      TEST_STRIPE_KEY,
      TEST_CRON_SECRET,
      SHIPPING_SECRET,
      ...clientSecrets,
      EMAIL,
      'example.org',
      PHONE,
      '7946',
      STREET,
      'Analytical',
      POSTCODE,
      SURNAME,
    ];
    for (const value of forbidden) {
      expect(output, `log output contains ${value.slice(0, 12)}…`).not.toContain(value);
    }
  });
});
