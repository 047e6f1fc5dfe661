/**
 * What WooCommerce would refuse is refused at the door: a customer's typo in an
 * email is a 400 naming the field, before any call to the store or to Stripe,
 * never a 500 after the store refused the write.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';
import { STORE_ACCEPTED_EMAILS } from '../stand-ins/email-cases';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

const endpoints = [
  { name: 'payment-intent', post: paymentIntent, path: '/api/payment-intent' },
  { name: 'submit-order', post: submitOrder, path: '/api/submit-order' },
] as const;

async function call(endpoint: (typeof endpoints)[number], body: Record<string, unknown>) {
  const response = await endpoint.post(postJson(endpoint.path, body));
  return { status: response.status, body: await response.json() };
}

const billing = { first_name: 'Ada', last_name: 'Lovelace', country: 'GB' };

describe.each(endpoints)('POST $path: values the store would refuse', (endpoint) => {
  it('refuses a billing email with a label ending in a hyphen (ada@x-.com) with 400 naming the field, before the store', async () => {
    providers.woo.seed({ id: 2101, billing: { email: 'before@example.com' } });
    const { status, body } = await call(endpoint, { token: await tokenFor(2101), billing_address: { ...billing, email: 'ada@x-.com' } });
    expect(status).toBe(400);
    expect(body).toEqual({
      error: 'Invalid request',
      details: [expect.objectContaining({ path: ['billing_address', 'email'], message: 'must be a valid email address' })],
    });
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(2101).billing.email).toBe('before@example.com');
  });

  it('refuses the same address in contact_info', async () => {
    providers.woo.seed({ id: 2102 });
    const { status, body } = await call(endpoint, {
      token: await tokenFor(2102),
      billing_address: billing,
      contact_info: { email: 'ada@sub-.example.com' },
    });
    expect(status).toBe(400);
    expect(body.details).toEqual([expect.objectContaining({ path: ['contact_info', 'email'] })]);
    expect(providers.calls).toEqual([]);
  });

  it('writes each address a real store accepted (zod refused them), in contact_info and in the billing address', async () => {
    for (const [index, email] of STORE_ACCEPTED_EMAILS.entries()) {
      const contactOrder = 2110 + index;
      const billingOrder = 2130 + index;
      providers.woo.seed({ id: contactOrder });
      providers.woo.seed({ id: billingOrder });
      const viaContact = await call(endpoint, { token: await tokenFor(contactOrder), billing_address: billing, contact_info: { email } });
      const viaBilling = await call(endpoint, { token: await tokenFor(billingOrder), billing_address: { ...billing, email } });
      expect([viaContact.status, viaBilling.status], email).toEqual([200, 200]);
      expect([providers.woo.get(contactOrder).billing.email, providers.woo.get(billingOrder).billing.email]).toEqual([email, email]);
    }
  });

  it('refuses an address longer than the store keeps (321 characters) with 400 naming the field, before the store', async () => {
    providers.woo.seed({ id: 2150, billing: { email: 'before@example.com' } });
    const email = `${'a'.repeat(309)}@example.com`;
    const { status, body } = await call(endpoint, { token: await tokenFor(2150), billing_address: billing, contact_info: { email } });
    expect(status).toBe(400);
    expect(body.details).toEqual([expect.objectContaining({ path: ['contact_info', 'email'], message: 'must be a valid email address' })]);
    expect(providers.calls).toEqual([]);
    expect(providers.woo.get(2150).billing.email).toBe('before@example.com');
  });

  it('refuses an empty billing email unless contact_info gives one, since WooCommerce refuses an empty one', async () => {
    providers.woo.seed({ id: 2103, billing: { email: 'before@example.com' } });
    const empty = await call(endpoint, { token: await tokenFor(2103), billing_address: { ...billing, email: '' } });
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual([expect.objectContaining({ path: ['billing_address', 'email'] })]);
    expect(providers.calls).toEqual([]);

    const replaced = await call(endpoint, {
      token: await tokenFor(2103),
      billing_address: { ...billing, email: '' },
      contact_info: { email: 'ada@example.com' },
    });
    expect(replaced.status).toBe(200);
    expect(providers.woo.get(2103).billing.email).toBe('ada@example.com');
  });

  it('refuses text with an unpaired UTF-16 surrogate, which PHP cannot decode', async () => {
    providers.woo.seed({ id: 2104 });
    const { status, body } = await call(endpoint, { token: await tokenFor(2104), billing_address: { ...billing, city: 'Lon\ud800don' } });
    expect(status).toBe(400);
    expect(body.details).toEqual([expect.objectContaining({ path: ['billing_address', 'city'], message: 'must be valid Unicode text' })]);
    expect(providers.calls).toEqual([]);
  });

  it('writes an address WordPress accepts, and the store takes it', async () => {
    providers.woo.seed({ id: 2105 });
    const { status } = await call(endpoint, {
      token: await tokenFor(2105),
      billing_address: { ...billing, city: 'Ōsaka 😀', email: "o'brien+shop@mail.example.co.uk" },
    });
    expect(status).toBe(200);
    expect(providers.woo.get(2105).billing).toMatchObject({ city: 'Ōsaka 😀', email: "o'brien+shop@mail.example.co.uk" });
  });
});
