/**
 * Heavy modules load on first use only, so a cold start pays for none it does not need: the Stripe SDK
 * (through lib/card/stripe.ts) when a request first needs the card provider,
 * and the Redis client library only in a process with REDIS_URL. A route that
 * never calls them (submit-order, the shipping webhook) never loads them.
 *
 * vi.mock's factory runs when the module is first imported, so it records the
 * load and hands back the real module.
 */
import { describe, expect, it, vi } from 'vitest';
import { POST as paymentIntent } from '@/app/api/payment-intent/route';
import { POST as shippingWebhook } from '@/app/api/shipping/webhook/route';
import { POST as submitOrder } from '@/app/api/submit-order/route';
import { useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { postJson, tokenFor } from '../support/requests';

const loaded = vi.hoisted(() => ({ stripe: 0, redis: 0 }));
vi.mock('@/lib/card/stripe', async (importOriginal) => {
  loaded.stripe += 1;
  return importOriginal();
});
vi.mock('redis', async (importOriginal) => {
  loaded.redis += 1;
  return importOriginal();
});

const providers = useProviders();

const address = { first_name: 'Grace', last_name: 'Hopper', address_1: '1 Navy Yard', city: 'Arlington', state: 'VA', postcode: '22201', country: 'US' };

describe('modules loaded on first use', () => {
  it('submit-order and the shipping webhook load neither the Stripe SDK nor the Redis client; a payment intent loads Stripe once', async () => {
    useTestEnv();
    providers.reset();
    providers.woo.seed({ id: 931, lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 932, status: 'processing' });

    const submitted = await submitOrder(
      postJson('/api/submit-order', { token: await tokenFor(931), billing_address: address, contact_info: { email: 'grace@example.com' } }),
    );
    expect(submitted.status).toBe(200);
    const shipped = await shippingWebhook(
      postJson('/api/shipping/webhook', { resource_type: 'SHIP_NOTIFY', order_number: '932', tracking_number: '1Z999', carrier: 'UPS' }, { origin: null }),
    );
    expect(shipped.status).toBe(200);
    expect(providers.woo.get(932).status).not.toBe('processing');
    expect(loaded).toEqual({ stripe: 0, redis: 0 });

    providers.woo.seed({ id: 933, lines: [{ total: '10.00' }] });
    providers.woo.seed({ id: 934, lines: [{ total: '12.00' }] });
    expect((await paymentIntent(postJson('/api/payment-intent', { token: await tokenFor(933) }))).status).toBe(200);
    expect((await paymentIntent(postJson('/api/payment-intent', { token: await tokenFor(934) }))).status).toBe(200);
    expect(loaded).toEqual({ stripe: 1, redis: 0 });
  });
});
