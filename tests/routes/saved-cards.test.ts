import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { POST } from '@/app/api/payment-intent/route';
import { PAYMENT_ELEMENT_FEATURES } from '@/lib/card/stripe';
import { stripeApiHandler } from '@/stand-ins/stripe/fetch-handler';
import { customerIdempotencyKey, META_DROPPED_TTL_MS } from '@/lib/checkout/saved-cards';
import { customerMeta, gatewayReadsCustomer, gatewaySavesCustomer, presentCustomer, setUserMeta, updateCustomer, userMeta } from '@/stand-ins/woocommerce/customers';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { loggedLines } from '../support/setup';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

afterEach(() => {
  providers.stripe.beforeExecute = undefined;
});

async function pay(orderId: number, extra: Record<string, unknown> = {}) {
  const response = await POST(postJson('/api/payment-intent', { token: await tokenFor(orderId), ...extra }));
  return { status: response.status, body: await response.json() };
}

const stripeCustomers = () => providers.stripe.customers;
const intentOf = (id: string) => providers.stripe.intents.get(id)!;
const metaOf = (wooCustomerId: number) => userMeta(providers.woo, wooCustomerId, '_stripe_customer_id');

/** A payment the customer completes in the Payment Element with a new card. */
function payWithNewCard(intentId: string) {
  return providers.stripe.confirm(intentId, { payment_method: 'pm_card_visa' });
}

describe('saved cards: guests', () => {
  it('a guest order gets no Stripe Customer and no session, even when asked to save the card', async () => {
    providers.woo.seed({ id: 301, lines: [{ total: '20.00' }], billing: { email: 'guest@example.com' } });

    const { status, body } = await pay(301, { save_payment_method: true });

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(stripeCustomers().customers.size).toBe(0);
    expect(providers.callsTo('store', 'GET', /\/customers\//)).toEqual([]);
    expect(intentOf(body.payment_intent_id)).toMatchObject({ customer: null, setup_future_usage: null });
  });

  it('an order whose registered customer was deleted from WordPress is paid as a guest', async () => {
    providers.woo.seed({ id: 303, customer_id: 9, lines: [{ total: '20.00' }] });
    providers.woo.customers.delete(9);

    const { status, body } = await pay(303, { save_payment_method: true });

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(stripeCustomers().customers.size).toBe(0);
  });

  it('refuses a save_payment_method that is not a boolean, writing nothing', async () => {
    providers.woo.seed({ id: 302, customer_id: 7, lines: [{ total: '20.00' }] });

    const { status, body } = await pay(302, { save_payment_method: 'yes' });

    expect(status).toBe(400);
    expect(JSON.stringify(body)).toContain('save_payment_method');
    expect(providers.calls).toEqual([]);
  });
});

describe('saved cards: a registered customer saving a card', () => {
  it('creates one Stripe Customer, stores it on the customer meta, and sets the intent to save the card', async () => {
    providers.woo.seed({ id: 311, customer_id: 7, lines: [{ total: '20.00' }], billing: { email: 'ada@example.com' } });

    const { status, body } = await pay(311, { save_payment_method: true });

    expect(status).toBe(200);
    const [customer] = [...stripeCustomers().customers.values()];
    expect(customer).toMatchObject({ metadata: { woocommerce_customer_id: '7' } });
    expect(metaOf(7)).toBe(customer!.id);
    expect(intentOf(body.payment_intent_id)).toMatchObject({ customer: customer!.id, setup_future_usage: 'off_session' });
    const create = providers.callsTo('card', 'POST', /\/v1\/customers$/)[0]!;
    expect(create.headers['idempotency-key']).toMatch(/^checkout-customer-7-/);

    // The session shows saved cards and never offers the Payment Element's own save (not combined with setup_future_usage).
    expect(body.customer_session_client_secret).toMatch(/^cuss_secret_/);
    const session = stripeCustomers().sessions.at(-1)!;
    expect(session.customer).toBe(customer!.id);
    expect(session.components).toMatchObject({
      payment_element: { enabled: 'true', features: { payment_method_redisplay: 'enabled', payment_method_save: 'disabled' } },
    });
    expect((session.components.payment_element as { features: Record<string, unknown> }).features).not.toHaveProperty('payment_method_save_usage');
    expect(PAYMENT_ELEMENT_FEATURES.payment_method_save).toBe('disabled');
  });

  it('a card paid on an intent that saves it is attached to the customer and listed for the next order', async () => {
    providers.woo.seed({ id: 312, customer_id: 7, lines: [{ total: '20.00' }] });
    const first = await pay(312, { save_payment_method: true });
    payWithNewCard(first.body.payment_intent_id);
    const customerId = metaOf(7) as string;
    expect(stripeCustomers().list(customerId)).toEqual([expect.objectContaining({ customer: customerId, card: { brand: 'visa', last4: '4242' } })]);

    providers.woo.seed({ id: 313, customer_id: 7, lines: [{ total: '35.00' }] });
    const second = await pay(313);

    expect(second.status).toBe(200);
    expect(stripeCustomers().customers.size).toBe(1);
    expect(intentOf(second.body.payment_intent_id)).toMatchObject({ customer: customerId, setup_future_usage: null });
    expect(stripeCustomers().cardsShownBy(second.body.customer_session_client_secret)).toEqual([
      expect.objectContaining({ card: { brand: 'visa', last4: '4242' } }),
    ]);

    // The returning customer pays with the saved card.
    const saved = stripeCustomers().list(customerId)[0]!.id;
    expect(providers.stripe.confirm(second.body.payment_intent_id, { payment_method: saved }).status).toBe('succeeded');
  });

  it('save_payment_method off leaves the card unsaved; turned on, then off again, the intent follows', async () => {
    providers.woo.seed({ id: 314, customer_id: 7, lines: [{ total: '20.00' }] });

    const on = await pay(314, { save_payment_method: true });
    expect(intentOf(on.body.payment_intent_id).setup_future_usage).toBe('off_session');

    const off = await pay(314, { save_payment_method: false });
    expect(off.body.payment_intent_id).toBe(on.body.payment_intent_id);
    expect(intentOf(off.body.payment_intent_id).setup_future_usage).toBeNull();
    // Still the returning customer's session: the cards saved before stay on offer.
    expect(off.body.customer_session_client_secret).toMatch(/^cuss_secret_/);

    payWithNewCard(off.body.payment_intent_id);
    expect(stripeCustomers().list(metaOf(7) as string)).toEqual([]);
  });

  it('a registered customer with no Stripe Customer who does not save gets none, and no session', async () => {
    providers.woo.seed({ id: 315, customer_id: 7, lines: [{ total: '20.00' }] });

    const { status, body } = await pay(315);

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(stripeCustomers().customers.size).toBe(0);
    expect(metaOf(7)).toBeUndefined();
  });
});

describe("saved cards: Stripe.js's Payment Element", () => {
  const browserStripe = () => stripeApiHandler(providers.stripe, 'sk_test_unused', { publishableKey: 'pk_test_page' });
  const elementsSession = (clientSecret: string, customerSession: string) =>
    browserStripe()(
      new Request(`https://api.stripe.com/v1/elements/sessions?${new URLSearchParams({ key: 'pk_test_page', client_secret: clientSecret, customer_session_client_secret: customerSession })}`),
    );

  it("lists the customer session's saved cards with the publishable key, only beside an intent of that customer", async () => {
    providers.woo.seed({ id: 316, customer_id: 7, lines: [{ total: '20.00' }] });
    const first = await pay(316, { save_payment_method: true });
    payWithNewCard(first.body.payment_intent_id);
    providers.woo.seed({ id: 317, customer_id: 7, lines: [{ total: '35.00' }] });
    const second = await pay(317);

    const shown = await elementsSession(second.body.client_secret, second.body.customer_session_client_secret);
    expect(shown.status).toBe(200);
    const saved = stripeCustomers().list(metaOf(7) as string)[0]!;
    expect(await shown.json()).toMatchObject({ customer: { payment_methods: [{ id: saved.id, card: { brand: 'visa', last4: '4242' } }] } });

    // Another customer's intent, or a secret that is not the intent's, gets none of them.
    providers.woo.seed({ id: 318, customer_id: 8, lines: [{ total: '20.00' }] });
    const other = await pay(318, { save_payment_method: true });
    expect((await elementsSession(other.body.client_secret, second.body.customer_session_client_secret)).status).toBe(400);
    expect((await elementsSession(`${second.body.payment_intent_id}_secret_wrong`, second.body.customer_session_client_secret)).status).toBe(400);
  });
});

describe('saved cards: whose cards', () => {
  it("a token for one customer's order never reaches another customer's Stripe Customer or cards", async () => {
    providers.woo.seed({ id: 321, customer_id: 7, lines: [{ total: '20.00' }] });
    const ada = await pay(321, { save_payment_method: true });
    payWithNewCard(ada.body.payment_intent_id);
    const adaCustomer = metaOf(7) as string;

    providers.woo.seed({ id: 322, customer_id: 8, lines: [{ total: '20.00' }] });
    // The client names nothing but its token: the customer comes from the order the token names.
    const bob = await pay(322, { save_payment_method: true, customer_id: 7, customer: adaCustomer });

    expect(bob.status).toBe(200);
    const bobCustomer = metaOf(8) as string;
    expect(bobCustomer).toMatch(/^cus_/);
    expect(bobCustomer).not.toBe(adaCustomer);
    expect(intentOf(bob.body.payment_intent_id).customer).toBe(bobCustomer);
    expect(stripeCustomers().sessions.at(-1)!.customer).toBe(bobCustomer);
    expect(stripeCustomers().cardsShownBy(bob.body.customer_session_client_secret)).toEqual([]);

    // Ada's saved card cannot pay Bob's intent.
    const adaCard = stripeCustomers().list(adaCustomer)[0]!.id;
    expect(() => providers.stripe.confirm(bob.body.payment_intent_id, { payment_method: adaCard })).toThrow(/different Customer/);
  });
});

describe('saved cards: an intent already being paid', () => {
  it('a reused intent that can no longer take the customer gets no session for their cards', async () => {
    const customer = stripeCustomers().seed();
    const intent = providers.stripe.create({ amount: '2000', currency: 'usd', metadata: { shop_order_id: '361' } });
    providers.stripe.setStatus(intent.id, 'requires_action');
    providers.woo.seed({ id: 361, customer_id: 7, lines: [{ total: '20.00' }], meta_data: [{ key: '_payment_intent_id', value: intent.id }] });
    userMetaSet(7, customer.id);

    const { status, body } = await pay(361);

    expect(status).toBe(200);
    expect(body.payment_intent_id).toBe(intent.id);
    expect(intentOf(intent.id).customer).toBeNull();
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(stripeCustomers().sessions).toEqual([]);
  });
});

describe('saved cards: a Stripe Customer that is gone', () => {
  it('a customer deleted at Stripe is recreated and the meta updated, not an error', async () => {
    const old = stripeCustomers().seed({ email: 'ada@example.com' });
    providers.woo.seed({ id: 331, customer_id: 7, lines: [{ total: '20.00' }] });
    userMetaSet(7, old.id);
    stripeCustomers().delete(old.id);

    const { status, body } = await pay(331, { save_payment_method: true });

    expect(status).toBe(200);
    const renewed = metaOf(7) as string;
    expect(renewed).toMatch(/^cus_/);
    expect(renewed).not.toBe(old.id);
    expect(intentOf(body.payment_intent_id).customer).toBe(renewed);
    expect(loggedLines().some((line) => line.event === 'saved_cards.customer_missing')).toBe(true);
  });

  it('a customer Stripe does not know (another account or mode) is recreated too', async () => {
    providers.woo.seed({ id: 332, customer_id: 7, lines: [{ total: '20.00' }] });
    userMetaSet(7, 'cus_fromAnotherAccount');

    const { status, body } = await pay(332, { save_payment_method: true });

    expect(status).toBe(200);
    expect(metaOf(7)).not.toBe('cus_fromAnotherAccount');
    expect(intentOf(body.payment_intent_id).customer).toBe(metaOf(7));
  });

  it('without a card to save, a deleted customer only hides saved cards: no new customer, no session', async () => {
    const old = stripeCustomers().seed();
    providers.woo.seed({ id: 333, customer_id: 7, lines: [{ total: '20.00' }] });
    userMetaSet(7, old.id);
    stripeCustomers().delete(old.id);

    const { status, body } = await pay(333);

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(stripeCustomers().customers.size).toBe(0);
  });
});

describe('saved cards: the official Stripe gateway', () => {
  it("reuses the gateway's Customer, kept under the site's table prefix that the REST API hides", async () => {
    const gatewayCustomer = stripeCustomers().seed({ email: 'ada@example.com' });
    providers.woo.seed({ id: 341, customer_id: 7, lines: [{ total: '20.00' }] });
    gatewaySavesCustomer(providers.woo, 7, gatewayCustomer.id);

    const { body } = await pay(341, { save_payment_method: true });

    expect(stripeCustomers().customers.size).toBe(1);
    expect(intentOf(body.payment_intent_id).customer).toBe(gatewayCustomer.id);
    expect(providers.callsTo('card', 'POST', /\/v1\/customers$/)).toEqual([]);
  });

  it("a Customer the service creates is the one the gateway's get_user_option() then reads", async () => {
    providers.woo.seed({ id: 342, customer_id: 7, lines: [{ total: '20.00' }] });

    await pay(342, { save_payment_method: true });

    expect(gatewayReadsCustomer(providers.woo, 7)).toBe(metaOf(7));
  });

  it("a Customer recreated by the service replaces the gateway's deleted one for the gateway too", async () => {
    const gatewayCustomer = stripeCustomers().seed();
    providers.woo.seed({ id: 344, customer_id: 7, lines: [{ total: '20.00' }] });
    gatewaySavesCustomer(providers.woo, 7, gatewayCustomer.id);
    stripeCustomers().delete(gatewayCustomer.id);

    await pay(344, { save_payment_method: true });

    const renewed = metaOf(7) as string;
    expect(renewed).not.toBe(gatewayCustomer.id);
    expect(userMeta(providers.woo, 7, 'wp__stripe_customer_id')).toBe(renewed);
    expect(gatewayReadsCustomer(providers.woo, 7)).toBe(renewed);
  });

  it("without Checkout Bridge 1.4.0 the gateway's Customer stays hidden and the written id is dropped: the payment goes on without saving", async () => {
    const gatewayCustomer = stripeCustomers().seed();
    providers.woo.seed({ id: 343, customer_id: 7, lines: [{ total: '20.00' }] });
    customerMeta(providers.woo).stripeCustomerBridge = false;
    gatewaySavesCustomer(providers.woo, 7, gatewayCustomer.id);

    const { status, body } = await pay(343, { save_payment_method: true });

    // WooCommerce's REST API shows no prefixed key and skips the protected `_stripe_customer_id` (200, nothing stored).
    expect(status).toBe(200);
    expect(metaOf(7)).toBeUndefined();
    expect(gatewayReadsCustomer(providers.woo, 7)).toBe(gatewayCustomer.id);
    expect(intentOf(body.payment_intent_id)).toMatchObject({ customer: null, setup_future_usage: null });
    expect(body).not.toHaveProperty('customer_session_client_secret');
  });
});

describe('saved cards: a store that drops the Customer id', () => {
  const dropped = () => loggedLines().filter((line) => line.event === 'store.customer_meta_dropped');

  it('the customers REST API neither shows nor keeps an underscored key without the plugin, and keeps only its own with it', async () => {
    providers.woo.seedCustomer({ id: 7, email: 'ada@example.com' });
    setUserMeta(providers.woo, 7, '_private_note', 'x');
    const put = (key: string) => updateCustomer(providers.woo, 7, { meta_data: [{ key, value: 'cus_Written1' }] });

    providers.woo.cartBridgeInstalled = false;
    expect(put('_stripe_customer_id').meta_data).toEqual([]);
    expect(metaOf(7)).toBeUndefined();
    expect(presentCustomer(providers.woo, 7).meta_data).toEqual([]);

    providers.woo.cartBridgeInstalled = true;
    expect(put('_stripe_customer_id').meta_data).toEqual([expect.objectContaining({ key: '_stripe_customer_id', value: 'cus_Written1' })]);
    put('_other_protected');
    expect(userMeta(providers.woo, 7, '_other_protected')).toBeUndefined();
    expect(presentCustomer(providers.woo, 7).meta_data.map((row) => row.key)).toEqual(['_stripe_customer_id']);
  });

  it('a dropped write hands out no Customer: the intent is paid unsaved, without a session, and the log says why once', async () => {
    providers.woo.cartBridgeInstalled = false;
    providers.woo.seed({ id: 345, customer_id: 7, lines: [{ total: '20.00' }] });

    const { status, body } = await pay(345, { save_payment_method: true });

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(intentOf(body.payment_intent_id)).toMatchObject({ customer: null, setup_future_usage: null });
    expect(dropped()).toEqual([expect.objectContaining({ level: 'error', wooCustomerId: 7, shown: 'none', advice: expect.stringContaining('Checkout Bridge plugin to 1.4.0') })]);
    payWithNewCard(body.payment_intent_id);
    for (const customer of stripeCustomers().customers.keys()) expect(stripeCustomers().list(customer)).toEqual([]);
  });

  it('a store found dropping the id gets no new Stripe Customer for an hour, then is tried again and kept once the plugin is there', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      providers.woo.cartBridgeInstalled = false;
      providers.woo.seed({ id: 346, customer_id: 7, lines: [{ total: '20.00' }] });
      providers.woo.seed({ id: 347, customer_id: 8, lines: [{ total: '20.00' }] });
      await pay(346, { save_payment_method: true });
      const creates = () => providers.callsTo('card', 'POST', /\/v1\/customers$/).length;
      expect(creates()).toBe(1);

      vi.advanceTimersByTime(META_DROPPED_TTL_MS - 1000);
      const other = await pay(347, { save_payment_method: true });
      expect(other.status).toBe(200);
      expect(creates()).toBe(1);
      expect(dropped()).toHaveLength(1);
      expect(loggedLines().some((line) => line.event === 'saved_cards.not_saved' && line.reason === 'store.customer_meta_dropped')).toBe(true);

      providers.woo.cartBridgeInstalled = true;
      vi.advanceTimersByTime(2000);
      const later = await pay(347, { save_payment_method: true });
      expect(creates()).toBe(2);
      expect(metaOf(8)).toMatch(/^cus_/);
      expect(intentOf(later.body.payment_intent_id)).toMatchObject({ customer: metaOf(8), setup_future_usage: 'off_session' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a shop-manager key refused (403) for a user who is not a customer: the payment goes on without saving', async () => {
    providers.woo.seed({ id: 348, customer_id: 9, lines: [{ total: '20.00' }] });
    providers.woo.customers.get(9)!.role = 'shop_manager';
    customerMeta(providers.woo).keyRole = 'shop_manager';

    const { status, body } = await pay(348, { save_payment_method: true });

    expect(status).toBe(200);
    expect(intentOf(body.payment_intent_id)).toMatchObject({ customer: null, setup_future_usage: null });
    expect(loggedLines().some((line) => line.event === 'saved_cards.not_saved' && line.reason === 'store.customer_not_editable')).toBe(true);
  });
});

describe('saved cards: faults', () => {
  it('two first payments of one customer at once create one Stripe Customer', async () => {
    providers.woo.seed({ id: 351, customer_id: 7, lines: [{ total: '20.00' }] });
    providers.woo.seed({ id: 352, customer_id: 7, lines: [{ total: '30.00' }] });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const firstCreateRunning = new Promise<void>((resolve) => (reached = resolve));
    providers.stripe.beforeExecute = async ({ path }) => {
      if (path !== '/v1/customers') return;
      providers.stripe.beforeExecute = undefined;
      reached();
      await released;
    };

    const first = pay(351, { save_payment_method: true });
    await firstCreateRunning;
    const second = pay(352, { save_payment_method: true });
    // The second create meets the first one still running (409) before the first is let go.
    await until(() => providers.callsTo('card', 'POST', /\/v1\/customers$/).length >= 2);
    release();
    const [a, b] = await Promise.all([first, second]);

    expect([a.status, b.status]).toEqual([200, 200]);
    expect(stripeCustomers().customers.size).toBe(1);
    const only = [...stripeCustomers().customers.keys()][0];
    expect(intentOf(a.body.payment_intent_id).customer).toBe(only);
    expect(intentOf(b.body.payment_intent_id).customer).toBe(only);
    expect(metaOf(7)).toBe(only);
  });

  it('a meta write lost after Stripe created the Customer: the retry gets the same Customer', async () => {
    providers.woo.seed({ id: 353, customer_id: 7, lines: [{ total: '20.00' }] });
    providers.failStore('PUT', /\/customers\/7$/, 500, 'internal_server_error');

    const lost = await pay(353, { save_payment_method: true });
    expect(lost.status).toBeGreaterThanOrEqual(500);
    expect(metaOf(7)).toBeUndefined();

    const retried = await pay(353, { save_payment_method: true });
    expect(retried.status).toBe(200);
    expect(stripeCustomers().customers.size).toBe(1);
    expect(metaOf(7)).toBe([...stripeCustomers().customers.keys()][0]);
    const keys = providers.callsTo('card', 'POST', /\/v1\/customers$/).map((call) => call.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(1);
  });

  it('Stripe refusing the customer (429) fails a payment that saves the card, and writes no intent', async () => {
    providers.woo.seed({ id: 354, customer_id: 7, lines: [{ total: '20.00' }] });
    providers.failCard('POST', /\/v1\/customers$/, 429, 'invalid_request_error', 'rate_limit');

    const { status, body } = await pay(354, { save_payment_method: true });

    expect(status).toBeGreaterThanOrEqual(500);
    expect(JSON.stringify(body)).not.toMatch(/cus_|rate_limit|stripe/i);
    expect(providers.stripe.intents.size).toBe(0);
  });

  it('Stripe failing (5xx) while only showing saved cards: the payment goes on without them', async () => {
    const existing = stripeCustomers().seed();
    providers.woo.seed({ id: 355, customer_id: 7, lines: [{ total: '20.00' }] });
    userMetaSet(7, existing.id);
    providers.failCard('GET', /\/v1\/customers\//, 500, 'api_error', 'internal', 2);

    const { status, body } = await pay(355);

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(loggedLines().some((line) => line.event === 'saved_cards.unavailable')).toBe(true);
  });

  it('a Customer Session Stripe refuses leaves the card form: the intent is still handed out, set to save the card', async () => {
    providers.woo.seed({ id: 356, customer_id: 7, lines: [{ total: '20.00' }] });
    providers.failCard('POST', /\/v1\/customer_sessions$/, 429, 'invalid_request_error', 'rate_limit');

    const { status, body } = await pay(356, { save_payment_method: true });

    expect(status).toBe(200);
    expect(body).not.toHaveProperty('customer_session_client_secret');
    expect(intentOf(body.payment_intent_id)).toMatchObject({ customer: metaOf(7), setup_future_usage: 'off_session' });
    expect(loggedLines().some((line) => line.event === 'saved_cards.session_failed')).toBe(true);
  });

  it('the idempotency key depends on the WooCommerce customer and the Customer it replaces', () => {
    const base = { wooCustomerId: 7, replaces: undefined, email: 'a@example.com', name: 'Ada' };
    expect(customerIdempotencyKey(base)).toBe(customerIdempotencyKey({ ...base }));
    expect(customerIdempotencyKey(base)).not.toBe(customerIdempotencyKey({ ...base, wooCustomerId: 8 }));
    expect(customerIdempotencyKey(base)).not.toBe(customerIdempotencyKey({ ...base, replaces: 'cus_old' }));
  });
});

/** The customer's `_stripe_customer_id` as a REST write leaves it (the plugin mirrors it for the gateway). */
function userMetaSet(wooCustomerId: number, value: string) {
  if (!providers.woo.customers.has(wooCustomerId)) providers.woo.seedCustomer({ id: wooCustomerId, email: `c${wooCustomerId}@example.com` });
  setUserMeta(providers.woo, wooCustomerId, '_stripe_customer_id', value);
}

/** Lets pending I/O run until `condition` holds (no timer involved). */
/** Waits for `condition` against a deadline, not a count of tries that a busy machine can outrun. */
async function until(condition: () => boolean, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!condition() && Date.now() < end) await new Promise<void>((resolve) => setTimeout(resolve, 1));
  expect(condition()).toBe(true);
}
