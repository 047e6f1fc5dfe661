/** Builders for requests to the route handlers, as a browser or a provider would send them. */
import { mintCheckoutToken } from '@/lib/security/checkout-token';
import { TEST_STOREFRONT_ORIGIN, TEST_TOKEN_SECRET } from './env';

let ipCounter = 0;

/** A fresh client address per call unless one is given, so rate limits do not leak between tests. */
export function freshIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

export interface RequestOptions {
  origin?: string | null;
  ip?: string;
  headers?: Record<string, string>;
}

export function postJson(path: string, body: unknown, options: RequestOptions = {}): Request {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const origin = options.origin === undefined ? TEST_STOREFRONT_ORIGIN : options.origin;
  if (origin !== null) headers.origin = origin;
  if (!('x-forwarded-for' in headers)) headers['x-forwarded-for'] = options.ip ?? freshIp();
  return new Request(`http://localhost:3000${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function tokenFor(orderId: number, ttl: string | number = '30m'): Promise<string> {
  return mintCheckoutToken(orderId, { secret: TEST_TOKEN_SECRET, ttl });
}

export async function readJson(response: Response): Promise<any> {
  return response.json();
}

/**
 * Rate-limit windows are aligned to the clock: a test that counts requests into one window
 * waits, when the current window ends within `marginMs`, for the next one to begin, so a slow
 * run never sees its counter reset halfway.
 */
export async function awayFromWindowEdge(windowMs = 60_000, marginMs = 15_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
