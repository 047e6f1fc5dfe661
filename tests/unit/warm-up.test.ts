/**
 * `npm run dev` asks every route once before it says the service is ready
 * (scripts/warm-up.ts): which routes it finds under app/, and that each ask
 * changes nothing (a CORS preflight for a route handler, a view for a page).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listen } from '@/stand-ins/loopback-http';
import { appRoutes, WARM_UP_QUERY, warmClients, warmRoutes } from '@/scripts/warm-up';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function appDir(files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'warm-up-'));
  dirs.push(dir);
  for (const file of files) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), '');
  }
  return dir;
}

describe('the routes npm run dev warms', () => {
  it('are every route handler (asked with OPTIONS) and page (GET) under app/, groups left out of the URL', () => {
    const dir = appDir([
      'page.tsx',
      'layout.tsx',
      'api/payment-intent/route.ts',
      'api/stripe/webhook/route.ts',
      '(shop)/about/page.tsx',
      '_private/helper/route.ts',
      'api/orders/[id]/route.ts',
      'api/lib.ts',
    ]);
    expect(appRoutes(dir)).toEqual([
      { path: '/', method: 'GET' },
      { path: '/about', method: 'GET' },
      { path: '/api/payment-intent', method: 'OPTIONS' },
      { path: '/api/stripe/webhook', method: 'OPTIONS' },
    ]);
  });

  it('include the service’s own, the payment and webhook routes among them', () => {
    const paths = appRoutes(join(process.cwd(), 'app')).map((route) => route.path);
    expect(paths).toEqual(expect.arrayContaining(['/api/payment-intent', '/api/submit-order', '/api/stripe/webhook', '/api/shipping/webhook', '/']));
  });
});

describe('warming', () => {
  it('asks each route once as a storefront’s preflight or a page view, marked as the warm-up’s, and reports each answer', async () => {
    const seen: { method: string; url: string; origin?: string; requestMethod?: string; authorization?: string }[] = [];
    const server = await listen((request, response, url) => {
      seen.push({
        method: request.method ?? '',
        url: `${url.pathname}${url.search}`,
        ...(request.headers.origin ? { origin: request.headers.origin } : {}),
        ...(request.headers['access-control-request-method'] ? { requestMethod: String(request.headers['access-control-request-method']) } : {}),
        ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      });
      response.writeHead(url.pathname === '/api/broken' ? 500 : url.pathname === '/' ? 200 : 204).end();
    });
    try {
      const done: number[] = [];
      const results = await warmRoutes(
        server.url,
        [
          { path: '/', method: 'GET' },
          { path: '/api/payment-intent', method: 'OPTIONS' },
          { path: '/api/broken', method: 'OPTIONS' },
        ],
        { origin: 'http://localhost:3001', onDone: (_result, count) => done.push(count) },
      );
      expect(done).toEqual([1, 2, 3]);
      expect(results.map((r) => [r.route.path, r.status]).sort()).toEqual([
        ['/', 200],
        ['/api/broken', 500],
        ['/api/payment-intent', 204],
      ]);
      expect(seen.sort((a, b) => a.url.localeCompare(b.url))).toEqual([
        { method: 'GET', url: `/?${WARM_UP_QUERY}`, origin: 'http://localhost:3001' },
        { method: 'OPTIONS', url: `/api/broken?${WARM_UP_QUERY}`, origin: 'http://localhost:3001', requestMethod: 'POST' },
        { method: 'OPTIONS', url: `/api/payment-intent?${WARM_UP_QUERY}`, origin: 'http://localhost:3001', requestMethod: 'POST' },
      ]);

      seen.length = 0;
      expect(await warmClients(server.url, 'cron-secret-0123456789')).toBe(204);
      expect(seen).toEqual([{ method: 'GET', url: `/api/health?${WARM_UP_QUERY}`, authorization: 'Bearer cron-secret-0123456789' }]);
    } finally {
      await server.close();
    }
  });

  it('reports a route that does not answer as 0, and goes on', async () => {
    const server = await listen((_request, response) => {
      response.writeHead(204).end();
    });
    const url = server.url;
    await server.close();
    const results = await warmRoutes(url, [{ path: '/api/health', method: 'OPTIONS' }], { timeoutMs: 2000 });
    expect(results.map((r) => r.status)).toEqual([0]);
  });
});
