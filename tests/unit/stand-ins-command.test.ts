/**
 * `npm run stand-ins`: the WooCommerce and Stripe stand-ins on their own, their URLs and keys printed as
 * the service's environment; with --service-url, Stripe's signed events go to that service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let child: ChildProcess;
let receiver: Server;
const received: { signature: string; body: string }[] = [];
let eventArrived: () => void;
const firstEvent = new Promise<void>((resolve) => (eventArrived = resolve));
const env: Record<string, string> = {};

beforeAll(async () => {
  // The service the events go to: it records what arrives.
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ signature: String(request.headers['stripe-signature']), body });
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
      eventArrived();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const serviceUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/stand-ins.ts', '--service-url', serviceUrl, '--woocommerce-port', '0', '--stripe-port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Started once the environment block is printed.
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const [, name, value] of output.matchAll(/^([A-Z_]+)=(\S+)$/gm)) env[name!] = value!;
      if (output.includes('Stop with Ctrl+C')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`stand-ins exited with ${code}`)));
  });
}, 30_000);

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await new Promise((resolve) => receiver.close(resolve));
});

describe('npm run stand-ins', () => {
  it('prints the service’s environment, and the WooCommerce stand-in answers with the printed keys', async () => {
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining(['WOOCOMMERCE_URL', 'WOOCOMMERCE_CONSUMER_KEY', 'WOOCOMMERCE_CONSUMER_SECRET', 'STRIPE_API_BASE_URL', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']),
    );
    const auth = `Basic ${Buffer.from(`${env.WOOCOMMERCE_CONSUMER_KEY}:${env.WOOCOMMERCE_CONSUMER_SECRET}`).toString('base64')}`;
    const order = await fetch(`${env.WOOCOMMERCE_URL}/wp-json/wc/v3/orders/1001`, { headers: { Authorization: auth } });
    expect(order.status).toBe(200);
    expect(await order.json()).toMatchObject({ id: 1001, status: 'pending' });
    const refused = await fetch(`${env.WOOCOMMERCE_URL}/wp-json/wc/v3/orders/1001`, { headers: { Authorization: 'Basic eDp5' } });
    expect(refused.status).toBe(401);
  });

  it('a confirmed payment at the Stripe stand-in reaches the service as an event signed with the printed secret', async () => {
    const stripe = new Stripe(env.STRIPE_SECRET_KEY!, { host: new URL(env.STRIPE_API_BASE_URL!).hostname, port: Number(new URL(env.STRIPE_API_BASE_URL!).port), protocol: 'http', maxNetworkRetries: 0 });
    const intent = await stripe.paymentIntents.create({ amount: 4500, currency: 'usd', metadata: { shop_order_id: '1001' } });
    await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
    await firstEvent;
    const [delivery] = received;
    const event = Stripe.webhooks.constructEvent(delivery!.body, delivery!.signature, env.STRIPE_WEBHOOK_SECRET!);
    expect(event).toMatchObject({ type: 'payment_intent.succeeded', data: { object: { id: intent.id } } });
  });
});
