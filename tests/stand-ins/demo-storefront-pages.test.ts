/**
 * The demo storefront's server-made pages: the order list says what each order is beside its status and
 * total as the shop holds them now, and an order the shop does not hold is a page that answers the reader
 * (the list and a notice), not a failed load the browser logs as an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ORDERS, DEMO_SECRETS, startDemoStandIns, type DemoStandIns } from '@/stand-ins/demo/world';
import type { RunningServer } from '@/stand-ins/loopback-http';
import { startStorefront } from '@/stand-ins/demo/storefront';

let standIns: DemoStandIns;
let storefront: RunningServer;

beforeAll(async () => {
  standIns = await startDemoStandIns();
  storefront = await startStorefront({
    // No service is reached here: the pages are made from the stand-ins only.
    serviceUrl: 'http://127.0.0.1:9',
    tokenSecret: DEMO_SECRETS.checkoutTokenSecret,
    woocommerceUrl: standIns.woocommerce.url,
    demoOrders: DEMO_ORDERS,
    port: 0,
  });
});

afterAll(async () => {
  await storefront?.close();
  await standIns?.close();
});

/** Each order row's cells as text, by order id. */
async function orderRows(query = ''): Promise<{ status: number; rows: Map<number, string[]>; notice: string | undefined }> {
  const response = await fetch(`${storefront.url}/${query}`);
  const html = await response.text();
  const rows = new Map<number, string[]>();
  for (const [, row] of html.matchAll(/<tr><td><a href="\/\?order=\d+">([\s\S]*?)<\/tr>/g)) {
    const cells = [...`<td>${row}`.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, cell]) => (cell as string).replace(/<[^>]+>/g, '').trim());
    rows.set(Number((cells[0] as string).replace('#', '')), cells);
  }
  return { status: response.status, rows, notice: /<p id="notice"[^>]*>([^<]*)<\/p>/.exec(html)?.[1] };
}

describe('the demo order list', () => {
  it('describes each order by what it is, beside the status and total it has now, not as it was seeded', async () => {
    const seeded = await orderRows();
    expect(seeded.rows.get(1001)).toEqual(['#1001', 'guest order', 'pending', '45.00 USD']);

    standIns.woocommerce.model.update(1001, { status: 'refunded' });
    const later = (await orderRows()).rows.get(1001) as string[];
    expect(later).toEqual(['#1001', 'guest order', 'refunded', '45.00 USD']);
    expect(later.join(' ')).not.toContain('pending');
    // No description names a status or an amount a payment, refund or dispute could change.
    for (const { shows } of DEMO_ORDERS) expect(shows).not.toMatch(/\b(pending|processing|on-hold|refunded|failed|shipped)\b|\d+\.\d\d|\bUSD|\bEUR|\bJPY/);
  });
});

describe('an order the shop does not hold', () => {
  it('is a page answering 200 with the order list and a notice, so the browser logs no failed load', async () => {
    const missing = await orderRows('?order=9999');
    expect(missing.status).toBe(200);
    expect(missing.notice).toBe('Order #9999 does not exist in the shop. Pick one of the demo orders.');
    expect(missing.rows.size).toBe(DEMO_ORDERS.length);

    const notANumber = await orderRows('?order=abc');
    expect(notANumber.status).toBe(200);
    expect(notANumber.notice).toBe('“abc” is not an order number. Pick one of the demo orders.');
  });
});
