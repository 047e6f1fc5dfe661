/**
 * `npm run send-event`: a signed test event of each handled type, posted to a deployment with its
 * webhook secret. Here the deployment is the service's own webhook route, in process.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { POST } from '@/app/api/stripe/webhook/route';
import { readCardEvent, toCardEvent } from '@/lib/card/events';
import { HANDLED_EVENT_TYPES, parseCommandLine, sendTestEvent, testEvent } from '@/scripts/send-event';
import { TEST_WEBHOOK_SECRET, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { freshIp } from '../support/requests';

const providers = useProviders();

beforeEach(() => {
  useTestEnv();
  providers.reset();
});

/** The deployment: requests reach the exported route handler as they would arrive over HTTP. */
const deployment = (async (input: string | URL | Request, init?: RequestInit) => {
  const headers = new Headers(init?.headers);
  headers.set('x-forwarded-for', freshIp());
  return POST(new Request(input, { ...init, headers }));
}) as typeof fetch;

describe('send-event', () => {
  it('a payment_intent.succeeded signed with the deployment’s secret pays the order', async () => {
    providers.woo.seed({ id: 5101, lines: [{ total: '45.00' }], shipping_total: '0.00', total_tax: '0.00' });
    const options = parseCommandLine(
      ['--url', 'https://checkout.example', '--type', 'payment_intent.succeeded', '--order', '5101', '--amount', '4500', '--charge', 'ch_test_5101', '--secret', TEST_WEBHOOK_SECRET],
      {},
    );
    const answer = await sendTestEvent({ ...options, fetch: deployment });
    expect(answer.status).toBe(200);
    expect(providers.woo.get(5101)).toMatchObject({ status: 'processing', transaction_id: 'ch_test_5101' });
  });

  it('an event signed with another secret is refused by the deployment and changes nothing', async () => {
    providers.woo.seed({ id: 5102, lines: [{ total: '10.00' }], shipping_total: '0.00', total_tax: '0.00' });
    const event = testEvent({ type: 'payment_intent.succeeded', orderId: 5102 });
    const answer = await sendTestEvent({ url: 'https://checkout.example', secret: 'whsec_not_the_deployments', event, fetch: deployment });
    expect(answer.status).toBe(400);
    expect(providers.woo.get(5102).status).toBe('pending');
  });

  it('builds, for every type the service handles, an event the service reads as that kind for the order', () => {
    expect(HANDLED_EVENT_TYPES.length).toBe(15);
    for (const type of HANDLED_EVENT_TYPES) {
      const event = toCardEvent(readCardEvent(testEvent({ type, orderId: 77, intentId: 'pi_test_77' })));
      expect(event.kind, type).not.toMatch(/^(unreadable|other)$/);
      const facts = Object.values(event).find((value) => typeof value === 'object' && value !== null) as { orderId?: number; intentId?: string };
      expect(facts, type).toMatchObject({ orderId: 77, intentId: 'pi_test_77' });
    }
  });

  it('refuses a type the service does not handle, a missing secret or a malformed order id, naming the problem', () => {
    const base = ['--url', 'https://checkout.example', '--order', '1'];
    expect(() => parseCommandLine([...base, '--type', 'customer.created', '--secret', 'whsec_x'], {})).toThrow('handles no event of type "customer.created"');
    expect(() => parseCommandLine([...base, '--type', 'refund.updated'], {})).toThrow('No webhook secret');
    expect(() => parseCommandLine(['--url', 'https://checkout.example', '--order', '01', '--type', 'refund.updated', '--secret', 'whsec_x'], {})).toThrow('--order');
    expect(parseCommandLine([...base, '--type', 'refund.updated'], { STRIPE_WEBHOOK_SECRET: 'whsec_env' }).secret).toBe('whsec_env');
  });

  it('as a command, exits non-zero with the usage when the arguments are wrong', async () => {
    const failure = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/send-event.ts', '--type', 'nope'], { env: { ...process.env, STRIPE_WEBHOOK_SECRET: '' } }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: npm run send-event') });
  });
});
