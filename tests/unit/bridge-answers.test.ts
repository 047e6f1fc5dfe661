// Checkout Bridge's answers as older releases give them: a merge answer without `shipped` and a restore answer
// without `items` are read as not shipped and as no items, never refused as a bad answer (the write did happen).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WooCommerceStore } from '@/lib/store/woocommerce';

let server: http.Server;
let url = '';
const answers: Record<string, unknown> = {};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const key = Object.keys(answers).find((k) => path.endsWith(k));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(key ? answers[key] : {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const store = () => new WooCommerceStore({ url, consumerKey: 'ck_test', consumerSecret: 'cs_test' }, 2000);

describe('Checkout Bridge answers', () => {
  it('a merge answer without `shipped` reads as not shipped', async () => {
    answers['/shipment-packages'] = { added: true, status: 'processing', packages: [] };
    const merge = { package: { key: 'k', tracking_number: 't', carrier: 'c', ship_date: 'd' } } as never;
    await expect(store().mergeShipmentPackage(42, merge)).resolves.toMatchObject({ added: true, shipped: false });
  });

  it('a restore answer without `items` reads as 0 items', async () => {
    answers['/cart/restore'] = { restored: true };
    await expect(store().restoreCustomerCart(7, 42, 'evt_1')).resolves.toBe(0);
  });
});
