/**
 * The store-fault injector itself (tests/support/store-faults.ts), against the
 * service's real store client: each fault kind reaches the client as the kind
 * of failure a real store or its proxy would cause, and `commit: 'after'`
 * leaves the write applied in the stand-in while the answer is lost. Both
 * mounts: msw (route tests) and the loopback server (socket-level faults).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '@/lib/errors';
import { WooCommerceStore } from '@/lib/store/woocommerce';
import { wooCommerceApiHandler } from '@/stand-ins/woocommerce/fetch-handler';
import { WooCommerceModel } from '@/stand-ins/woocommerce/model';
import type { RunningServer } from '@/stand-ins/loopback-http';
import { TEST_CONSUMER_KEY, TEST_CONSUMER_SECRET, TEST_STORE_URL, useTestEnv } from '../support/env';
import { useProviders } from '../support/providers';
import { createStoreFaults, startFaultyServer, STORE_FAULT_KINDS, type StoreFaultKind, type StoreFaults } from '../support/store-faults';

const TIMEOUT_MS = 300;
const ORDER = /\/wc\/v3\/orders\/\d+$/;

/** What the store client makes of each fault. */
const EXPECTED: Record<StoreFaultKind, StoreError['failure']> = {
  refused: 'unavailable',
  reset: 'unavailable',
  hang: 'timeout',
  status_500: 'unavailable',
  status_502: 'unavailable',
  status_429: 'rejected',
  status_403: 'rejected',
  redirect_302: 'rejected',
  html_200: 'bad_response',
  truncated_json_200: 'bad_response',
};

async function failureOf(write: Promise<unknown>): Promise<StoreError> {
  const error = await write.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

function storeAt(url: string): WooCommerceStore {
  return new WooCommerceStore({ url, consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET }, TIMEOUT_MS);
}

describe('msw mount (providers.storeFaults)', () => {
  const providers = useProviders();
  beforeEach(() => {
    useTestEnv({ UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) });
    providers.reset();
  });
  afterEach(() => providers.storeFaults.clear());

  for (const kind of STORE_FAULT_KINDS) {
    for (const commit of ['before', 'after'] as const) {
      it(`${kind}, ${commit} commit: the client fails as ${EXPECTED[kind]}, the write applied only after commit`, async () => {
        providers.woo.seed({ id: 5001 });
        providers.storeFaults.inject({ kind, method: 'PUT', path: ORDER, commit });
        const error = await failureOf(storeAt(TEST_STORE_URL).updateOrder(5001, { status: 'on-hold' }));
        expect(error.failure).toBe(EXPECTED[kind]);
        const applied = kind !== 'refused' && commit === 'after';
        expect(providers.woo.get(5001).status).toBe(applied ? 'on-hold' : 'pending');
        expect(providers.storeFaults.fired).toEqual([{ kind, commit: kind === 'refused' ? 'before' : commit, method: 'PUT', path: '/wp-json/wc/v3/orders/5001' }]);
        // Fired once: the next write goes through.
        await storeAt(TEST_STORE_URL).updateOrder(5001, { status: 'processing' });
        expect(providers.woo.get(5001).status).toBe('processing');
      });
    }
  }

  it('faults only the matching method and path, as many times as asked', async () => {
    providers.woo.seed({ id: 5002 });
    providers.storeFaults.inject({ kind: 'status_500', method: 'PUT', path: ORDER, times: 2 });
    const store = storeAt(TEST_STORE_URL);
    expect((await store.getOrder(5002)).status).toBe('pending');
    await failureOf(store.updateOrder(5002, { status: 'on-hold' }));
    await failureOf(store.updateOrder(5002, { status: 'on-hold' }));
    await store.updateOrder(5002, { status: 'on-hold' });
    expect(providers.storeFaults.fired).toHaveLength(2);
  });

  it('hangStarted resolves while the request hangs; releasing ends it', async () => {
    providers.woo.seed({ id: 5003 });
    providers.storeFaults.inject({ kind: 'hang', method: 'PUT', path: ORDER, commit: 'after' });
    const started = providers.storeFaults.hangStarted();
    const write = failureOf(storeAt(TEST_STORE_URL).updateOrder(5003, { status: 'on-hold' }));
    await started;
    // The stand-in applied the write before hanging: committed, answer never sent.
    expect(providers.woo.get(5003).status).toBe('on-hold');
    expect((await write).failure).toBe('timeout');
  });
});

describe('loopback mount (startFaultyServer)', () => {
  let model: WooCommerceModel;
  let faults: StoreFaults;
  let server: RunningServer;
  beforeAll(async () => {
    faults = createStoreFaults();
    server = await startFaultyServer(
      (request) => wooCommerceApiHandler(model, { consumerKey: TEST_CONSUMER_KEY, consumerSecret: TEST_CONSUMER_SECRET })(request),
      faults,
    );
  });
  afterAll(async () => {
    faults.clear();
    await server.close();
  });
  beforeEach(() => {
    model = new WooCommerceModel();
  });
  afterEach(() => faults.clear());

  for (const kind of STORE_FAULT_KINDS) {
    for (const commit of ['before', 'after'] as const) {
      it(`${kind}, ${commit} commit: the client fails as ${EXPECTED[kind]}, the write applied only after commit`, async () => {
        model.seed({ id: 5101 });
        faults.inject({ kind, method: 'PUT', path: ORDER, commit });
        const error = await failureOf(storeAt(server.url).updateOrder(5101, { status: 'on-hold' }));
        expect(error.failure).toBe(EXPECTED[kind]);
        expect(model.get(5101).status).toBe(kind !== 'refused' && commit === 'after' ? 'on-hold' : 'pending');
        faults.releaseHangs();
        await storeAt(server.url).updateOrder(5101, { status: 'processing' });
        expect(model.get(5101).status).toBe('processing');
      });
    }
  }
});
