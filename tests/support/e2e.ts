/**
 * The end-to-end world: the WooCommerce and Stripe stand-ins (seeded with the
 * demo orders) and the production build served by `next start`, all on
 * 127.0.0.1 with free ports, plus, for the browser test, storefront pages on
 * an allowed and a disallowed origin and a recording proxy in front of the
 * service so the test can see which requests the browser really sent.
 *
 * Everything is started by the test file and stopped in its afterAll; the
 * service's output goes to test-artifacts/e2e-<name>.log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { mintCheckoutToken } from '@/lib/security/checkout-token';
import { environmentWithoutServiceVariables, stopGroup } from '@/scripts/service-process';
import { DEMO_ORDERS, DEMO_SECRETS, demoServiceEnv, demoWebhookEndpoint, installCompanionGateway, startDemoStandIns, type DemoStandIns } from '@/stand-ins/demo/world';
import { freePort, listen, LOOPBACK, type RunningServer } from '@/stand-ins/loopback-http';
import type { Page } from 'playwright-core';
import { startStorefront } from '@/stand-ins/demo/storefront';

export const ARTIFACTS = join(process.cwd(), 'test-artifacts');


export interface ServiceServer {
  url: string;
  close(): Promise<void>;
}

/** Starts `next start` on 127.0.0.1 and a free port, and waits until it answers. */
export async function startService(name: string, env: Record<string, string>): Promise<ServiceServer> {
  const port = await freePort();
  mkdirSync(ARTIFACTS, { recursive: true });
  const logFile = join(ARTIFACTS, `e2e-${name}.log`);
  const log = createWriteStream(logFile);
  // The server gets only the service variables given here, never the test run's own.
  const inherited = environmentWithoutServiceVariables();
  const nextBin = createRequire(join(process.cwd(), 'package.json')).resolve('next/dist/bin/next');
  const child: ChildProcess = spawn(process.execPath, [nextBin, 'start', '--port', String(port), '--hostname', LOOPBACK], {
    env: { ...inherited, ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so closing it ends everything it started.
    detached: true,
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://${LOOPBACK}:${port}`;

  const close = async () => {
    await stopGroup(child, exited);
    log.end();
  };

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(2000) });
      if (response.status < 500) return { url, close };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await close();
  throw new Error(`next start did not come up on ${url}; see ${logFile}`);
}

export const E2E_WEBHOOK_RETRY_DELAYS_MS = [200, 500, 1000];

export interface E2eWorld {
  standIns: DemoStandIns;
  service: ServiceServer;
  /** http://127.0.0.1:<port> of the stand-ins, for the read-only order view. */
  woocommerceUrl: string;
  allowedOrigin: string;
  close(): Promise<void>;
}

/** Stand-ins with the demo orders, and the built service against them with the demo secrets. */
export async function startE2eWorld(
  name: string,
  options: { allowedOrigins?: string[]; extraEnv?: Record<string, string> } = {},
): Promise<E2eWorld> {
  // Stripe's retries, compressed further than the demo's so a test sees them within its timeout.
  const standIns = await startDemoStandIns({}, { webhookRetryDelaysMs: E2E_WEBHOOK_RETRY_DELAYS_MS });
  const allowedOrigins = options.allowedOrigins ?? ['https://storefront.e2e.test'];
  let service: ServiceServer;
  try {
    service = await startService(name, {
      ...demoServiceEnv({ woocommerce: standIns.woocommerce.url, stripe: standIns.stripe.url, storefrontOrigins: allowedOrigins }),
      TRUST_PROXY_HOPS: '1',
      UPSTREAM_TIMEOUT_MS: '5000',
      ...options.extraEnv,
    });
  } catch (error) {
    await standIns.close();
    throw error;
  }
  // As Stripe does: a card confirmed with the stand-in is followed by its signed event, posted to the service.
  standIns.stripe.deliverEventsTo(demoWebhookEndpoint(service.url));
  installCompanionGateway(standIns.woocommerce.model, service.url);
  return {
    standIns,
    service,
    woocommerceUrl: standIns.woocommerce.url,
    allowedOrigin: allowedOrigins[0] as string,
    close: async () => {
      await service.close();
      await standIns.close();
    },
  };
}

export function demoToken(orderId: number): Promise<string> {
  return mintCheckoutToken(orderId, { secret: DEMO_SECRETS.checkoutTokenSecret, ttl: '10m' });
}

let ipCounter = 0;
/** A fresh client address for X-Forwarded-For, so each test has its own rate-limit bucket. */
export function e2eIp(): string {
  ipCounter += 1;
  return `10.99.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

export interface RecordedRequest {
  method: string;
  path: string;
  origin: string | undefined;
}

/**
 * A loopback reverse proxy in front of the service that records what reaches
 * it: a browser's CORS preflight is not visible to page scripts, but it is here.
 */
export interface RecordingProxy extends RunningServer {
  requests: RecordedRequest[];
  /**
   * Holds the next `method path` request until released: `arrived` settles when it reaches the proxy.
   * A slow answer on cue, with no timer.
   */
  holdNext(method: string, path: string): { arrived: Promise<void>; release(): void };
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const holds: { method: string; path: string; arrived: () => void; released: Promise<void> }[] = [];
  const upstream = new URL(target);
  const server = await listen(async (request, response, url, body) => {
    requests.push({ method: request.method ?? 'GET', path: url.pathname, origin: request.headers.origin });
    const hold = holds.findIndex((h) => h.method === request.method && h.path === url.pathname);
    if (hold >= 0) {
      const [held] = holds.splice(hold, 1);
      held?.arrived();
      await held?.released;
    }
    return new Promise<void>((resolve) => {
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers: { ...request.headers, host: upstream.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.on('end', () => resolve());
        },
      );
      forward.on('error', () => {
        response.writeHead(502).end();
        resolve();
      });
      forward.end(body);
    });
  });
  return {
    ...server,
    requests,
    holdNext(method, path) {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      holds.push({ method, path, arrived, released });
      return { arrived: arrival, release };
    },
  };
}

/** The demo storefront page calling serviceUrl, minting tokens with the demo secret; port 0 for any free port. */
export async function startStorefrontFor(serviceUrl: string, port = 0): Promise<RunningServer> {
  return startStorefront({ serviceUrl, tokenSecret: DEMO_SECRETS.checkoutTokenSecret, port });
}

/**
 * The whole demo storefront for a world: the page calls serviceUrl (the service, or a proxy in front
 * of it), confirms cards with the world's Stripe stand-in, shows the order from the WooCommerce
 * stand-in's read-only view, and plays ShipStation with the demo shipping secret.
 */
export async function startDemoStorefrontFor(world: E2eWorld, serviceUrl: string, port = 0): Promise<RunningServer> {
  return startStorefront({
    serviceUrl,
    tokenSecret: DEMO_SECRETS.checkoutTokenSecret,
    stripe: { url: world.standIns.stripe.url, publishableKey: DEMO_SECRETS.stripePublishableKey },
    woocommerceUrl: world.woocommerceUrl,
    shippingWebhookSecret: DEMO_SECRETS.shippingWebhookSecret,
    demoOrders: DEMO_ORDERS,
    port,
  });
}

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = (): boolean => existsSync(CHROMIUM_PATH);

/** The flags this machine's Chromium needs (no sandbox as root, no network beyond loopback). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * The console errors and uncaught exceptions of a page, for a test to fail on. A refusal the test
 * provokes on purpose (a 400 the service answers) is allowed by naming it.
 */
export function watchConsole(page: Page): { unexpected(): string[]; allow(pattern: RegExp): void } {
  const errors: string[] = [];
  const allowed: RegExp[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return {
    unexpected: () => errors.filter((error) => !allowed.some((pattern) => pattern.test(error))),
    allow: (pattern) => allowed.push(pattern),
  };
}
