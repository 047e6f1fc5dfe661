import { describe, expect, it } from 'vitest';
import { ShipStationError, UpstreamHttpError } from '@/lib/errors';
import { parseShipmentsResponse, SHIPMENT_PAGES_PER_READ, ShipStationClient } from '@/lib/shipping/shipstation';
import { withRequestDeadline } from '@/lib/upstream/budget';
import type { send, UpstreamAnswer, UpstreamRequest } from '@/lib/upstream/node-http';

const BASE = 'https://ssapi.shipstation.com';
const URL_1 = `${BASE}/shipments?batchId=1`;
const settings = { apiKey: 'key', apiSecret: 'secret', apiBaseUrl: BASE, timeoutMs: 5_000 };

interface Seen {
  url: string;
  init: UpstreamRequest | undefined;
}

/** The transport (lib/upstream/node-http.ts `send`) answering from a queue, refusing a declared length over the limit as it does. */
function fakeSend(answers: (Response | Error)[]) {
  const seen: Seen[] = [];
  const impl = (async (request: UpstreamRequest): Promise<UpstreamAnswer> => {
    seen.push({ url: request.url.href, init: request });
    const answer = answers.shift();
    if (!answer) throw new Error('no answer queued');
    if (answer instanceof Error) throw answer;
    if (Number(answer.headers.get('content-length')) > (request.maxBytes ?? Infinity)) {
      throw new UpstreamHttpError('upstream answer too large', 'ERR_ANSWER_TOO_LARGE');
    }
    return { status: answer.status, headers: Object.fromEntries(answer.headers), body: Buffer.from(await answer.arrayBuffer()) };
  }) as typeof send;
  return { seen, impl };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

function client(answers: (Response | Error)[], clock = { now: 0 }, sleeps: number[] = []) {
  const fake = fakeSend(answers);
  const instance = new ShipStationClient(settings, {
    send: fake.impl,
    now: () => clock.now,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
    },
  });
  return { instance, seen: fake.seen, sleeps, clock };
}

async function failure(promise: Promise<unknown>): Promise<ShipStationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ShipStationError);
  return error as ShipStationError;
}

describe('ShipStation client', () => {
  it('GETs the resource with Basic auth, refusing redirects, with a timeout', async () => {
    const { instance, seen } = client([json({ shipments: [], total: 0, page: 1, pages: 0 })]);

    await instance.shipmentsAt(URL_1);

    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe(URL_1);
    const init = seen[0]!.init!;
    expect(init.method).toBe('GET');
    expect((init.headers as Record<string, string>).Authorization).toBe(`Basic ${Buffer.from('key:secret').toString('base64')}`);
    expect(init.timeoutMs).toBe(settings.timeoutMs);
  });

  it('follows no redirect: a 3xx fails as refused, and nothing else is fetched', async () => {
    const { instance, seen } = client([new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } })]);
    const error = await failure(instance.shipmentsAt(URL_1));
    expect(error).toMatchObject({ failure: 'rejected', status: 302 });
    expect(seen).toHaveLength(1);
  });

  it('refuses a foreign URL without calling fetch', async () => {
    const { instance, seen } = client([]);
    const error = await failure(instance.shipmentsAt('https://attacker.example/shipments'));
    expect(error.failure).toBe('foreign_origin');
    expect(seen).toHaveLength(0);
  });

  it('turns shipments into notices, voided ones marked (to be noted, never shipped)', () => {
    const page = parseShipmentsResponse({
      shipments: [
        { orderNumber: '1', trackingNumber: 'T1', carrierCode: 'ups', shipDate: '2026-05-01', voided: false },
        { orderNumber: '2', trackingNumber: 'T2', carrierCode: 'ups', shipDate: '2026-05-01', voided: true },
        { orderNumber: 3, trackingNumber: null, carrierCode: null, shipDate: null },
        { orderNumber: '4', voided: 'sometimes' },
      ],
      page: 1,
      pages: 1,
    });
    expect(page.notices).toEqual([
      { orderNumber: '1', trackingNumber: 'T1', carrier: 'ups', shipDate: '2026-05-01' },
      { orderNumber: '2', trackingNumber: 'T2', carrier: 'ups', shipDate: '2026-05-01', voided: true },
      { orderNumber: '3', trackingNumber: undefined, carrier: undefined, shipDate: undefined },
    ]);
    expect(page.voided).toBe(1);
    expect(page.malformed).toBe(1);
  });

  it.each([
    [json({ shipments: [] }, 500), 'unavailable', 500],
    [json({ Message: 'denied' }, 401), 'rejected', 401],
    [new Response('not json', { status: 200 }), 'bad_response', 200],
    [json({ orders: [] }), 'bad_response', 200],
  ])('maps failures: %#', async (answer, kind, status) => {
    // The answer twice: a 5xx is read once more before the client gives up.
    const error = await failure(client([answer, answer.clone()]).instance.shipmentsAt(URL_1));
    expect(error.failure).toBe(kind);
    expect(error.status).toBe(status);
    expect(error.message).not.toContain('denied');
  });

  it('maps a timeout and a network failure', async () => {
    const timeout = new UpstreamHttpError('upstream request timed out', 'ECONNABORTED');
    expect((await failure(client([timeout, timeout]).instance.shipmentsAt(URL_1))).failure).toBe('timeout');
    const offline = new UpstreamHttpError('upstream request failed', 'ECONNREFUSED');
    expect((await failure(client([offline, offline]).instance.shipmentsAt(URL_1))).failure).toBe('unavailable');
  });

  it('refuses a response larger than it will read', async () => {
    const big = new Response('x', { headers: { 'content-length': String(5 * 1024 * 1024) } });
    expect((await failure(client([big]).instance.shipmentsAt(URL_1))).failure).toBe('bad_response');
  });

  it('waits out a 429 for the reset ShipStation names, then retries once', async () => {
    const { instance, seen, sleeps } = client([
      json({ message: 'Too Many Requests' }, 429, { 'X-Rate-Limit-Remaining': '0', 'X-Rate-Limit-Reset': '3' }),
      json({ shipments: [{ orderNumber: '1', voided: false }], page: 1, pages: 1 }),
    ]);

    const result = await instance.shipmentsAt(URL_1);

    expect(seen).toHaveLength(2);
    expect(sleeps).toEqual([3_000]);
    expect(result.notices).toHaveLength(1);
  });

  it('gives up rather than wait past the upstream timeout', async () => {
    const { instance, seen, sleeps } = client([json({}, 429, { 'X-Rate-Limit-Reset': '30' })]);

    const error = await failure(instance.shipmentsAt(URL_1));

    expect(error.failure).toBe('rate_limited');
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('stops before ShipStation has to say 429 once the headers report the window used up', async () => {
    const clock = { now: 0 };
    const { instance, seen, sleeps } = client(
      [
        json({ shipments: [], page: 1, pages: 1 }, 200, { 'X-Rate-Limit-Limit': '40', 'X-Rate-Limit-Remaining': '0', 'X-Rate-Limit-Reset': '2' }),
        json({ shipments: [], page: 1, pages: 1 }),
      ],
      clock,
    );

    await instance.shipmentsAt(URL_1);
    await instance.shipmentsAt(URL_1);

    expect(seen).toHaveLength(2);
    expect(sleeps).toEqual([2_000]);
  });

});

describe('ShipStation batches of several pages', () => {
  /** Page `n` of a batch of `pages` pages, one shipment on each (order number = page number). */
  const page = (n: number, pages: number) => json({ shipments: [{ orderNumber: String(n) }], total: pages, page: n, pages });
  const pageParam = (seen: Seen) => new URL(seen.url).searchParams.get('page');

  it('reads to the last page', async () => {
    const { instance, seen } = client([page(1, 3), page(2, 3), page(3, 3)]);

    const result = await instance.shipmentsAt(URL_1);

    expect(seen.map(pageParam)).toEqual([null, '2', '3']);
    expect(new URL(seen[1]!.url).searchParams.get('batchId')).toBe('1');
    expect(result.notices.map((n) => n.orderNumber)).toEqual(['1', '2', '3']);
    expect(result.unread).toBeUndefined();
  });

  it(`stops after ${SHIPMENT_PAGES_PER_READ} pages and hands back the rest, which a read of the URL it names goes on with`, async () => {
    const pages = 2 * SHIPMENT_PAGES_PER_READ + 5;
    const all = Array.from({ length: pages }, (_, i) => page(i + 1, pages));
    const { instance, seen } = client(all);

    const first = await instance.shipmentsAt(URL_1);

    expect(seen).toHaveLength(SHIPMENT_PAGES_PER_READ);
    expect(first.notices).toHaveLength(SHIPMENT_PAGES_PER_READ);
    expect(first.unread).toEqual({
      resourceUrl: `${URL_1}&page=${SHIPMENT_PAGES_PER_READ + 1}`,
      page: SHIPMENT_PAGES_PER_READ + 1,
      pages,
      reason: 'pages_per_read',
    });

    const second = await instance.shipmentsAt(first.unread!.resourceUrl);
    const third = await instance.shipmentsAt(second.unread!.resourceUrl);

    expect(third.unread).toBeUndefined();
    const read = [first, second, third].flatMap((r) => r.notices.map((n) => Number(n.orderNumber)));
    // Every page once, none skipped, none twice.
    expect(read).toEqual(Array.from({ length: pages }, (_, i) => i + 1));
    expect(seen.map(pageParam).slice(SHIPMENT_PAGES_PER_READ - 1, SHIPMENT_PAGES_PER_READ + 2)).toEqual([
      String(SHIPMENT_PAGES_PER_READ),
      String(SHIPMENT_PAGES_PER_READ + 1),
      String(SHIPMENT_PAGES_PER_READ + 2),
    ]);
  });

  it('a later page that fails ends the read with the pages read so far and the failed page as the rest', async () => {
    const { instance } = client([page(1, 4), page(2, 4), json({ Message: 'Forbidden' }, 403)]);

    const result = await instance.shipmentsAt(URL_1);

    expect(result.notices.map((n) => n.orderNumber)).toEqual(['1', '2']);
    expect(result.unread).toMatchObject({ resourceUrl: `${URL_1}&page=3`, page: 3, pages: 4, reason: 'failed' });
    expect(result.unread?.error).toMatchObject({ failure: 'rejected', status: 403 });
  });

  it("does not start a page the request has no time for (a page's worst case: twice the timeout)", async () => {
    const { instance, seen } = client([page(1, 3), page(2, 3), page(3, 3)]);

    // 9 s left, under the 10 s a page may take with the 5 s timeout.
    const result = await withRequestDeadline(9_000, () => instance.shipmentsAt(URL_1));

    expect(seen).toHaveLength(1);
    expect(result.notices).toHaveLength(1);
    expect(result.unread).toEqual({ resourceUrl: `${URL_1}&page=2`, page: 2, pages: 3, reason: 'no_time' });
  });

  it('an empty page ends the batch whatever its page count says', async () => {
    const { instance, seen } = client([page(1, 1_000), json({ shipments: [], total: 1_000, page: 2, pages: 1_000 })]);

    const result = await instance.shipmentsAt(URL_1);

    expect(seen).toHaveLength(2);
    expect(result.unread).toBeUndefined();
  });
});
