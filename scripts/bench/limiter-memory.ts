/**
 * The memory check at the rate limiter's own level: the in-process limiter
 * the server uses (lib/shared-state/rate-limit.ts), fed client keys exactly as
 * the route wrapper makes them (lib/http/client-ip.ts, from an X-Forwarded-For
 * address) for as many distinct clients as asked, with the live heap measured
 * after a full garbage collection every `checkpoint` clients.
 *
 * Why here and not only through the server: Next.js spends a few ms of CPU on
 * any request, so 100,000 requests cost the server minutes, more than the whole
 * bench may take; the limiter's own cost per client is what decides whether
 * memory stays bounded, and it takes a second to measure.
 *
 * Run (the bench does): node --expose-gc --import tsx scripts/bench/limiter-memory.ts <clients> <checkpoint>
 * Prints one JSON line: [{ clients, heapKb, held }].
 */
import { clientIp } from '@/lib/http/client-ip';
import { MemoryRateLimiter, RATE_LIMITS } from '@/lib/shared-state/rate-limit';
import { nextClientIp } from './flows';

const clients = Number(process.argv[2] ?? 100_000);
const checkpoint = Number(process.argv[3] ?? 10_000);
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with node --expose-gc');

function liveHeapKb(): number {
  collect?.();
  collect?.();
  return Math.round(process.memoryUsage().heapUsed / 1024);
}

const limiter = new MemoryRateLimiter();
const points: { clients: number; heapKb: number; held: number }[] = [{ clients: 0, heapKb: liveHeapKb(), held: 0 }];
for (let seen = 1; seen <= clients; seen += 1) {
  const headers = new Headers({ 'x-forwarded-for': nextClientIp() });
  await limiter.hit(RATE_LIMITS.cardWebhook, clientIp(headers, 1, 'x-forwarded-for'));
  if (seen % checkpoint === 0) points.push({ clients: seen, heapKb: liveHeapKb(), held: limiter.size });
}
console.log(JSON.stringify(points));
