/**
 * The memory check at the route's level: the card webhook's route handler
 * itself (app/api/cardprovider/webhook/route.ts), called in this process
 * without Next.js, fed one request from each of `clients` distinct client
 * addresses (the bench's memory probe: the rate limiter counts the client,
 * then a 400 for the missing signature), with the live heap measured after a
 * full garbage collection every `checkpoint` clients.
 *
 * Between the limiter alone (limiter-memory.ts) and the server's resident
 * memory: everything the service's own code keeps per request (the route
 * wrapper, request ids, log scope, the limiter) shows here, and no V8 heap
 * sizing, allocator or Next.js cache does.
 *
 * Run (the bench does): node --expose-gc --import tsx scripts/bench/route-memory.ts <clients> <checkpoint>
 * Prints one JSON line: [{ clients, heapKb, held }].
 */
import { demoServiceEnv } from '@/stand-ins/demo/world';
import { memoryProbe } from './flows';

const clients = Number(process.argv[2] ?? 100_000);
const checkpoint = Number(process.argv[3] ?? 10_000);
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with node --expose-gc');

// The server's configuration (no upstream is called: every request ends at the signature check).
Object.assign(process.env, {
  ...demoServiceEnv({ woocommerce: 'http://127.0.0.1:9', stripe: 'http://127.0.0.1:9', storefrontOrigins: ['https://storefront.bench.test'] }),
  TRUST_PROXY_HOPS: '1',
  NODE_ENV: 'production',
});
// Log lines would be most of this process's output and allocations: the server writes them to a file, this drops them.
console.log = () => undefined;
console.warn = () => undefined;
console.error = () => undefined;
const print = (line: string) => process.stdout.write(`${line}\n`);

const { POST } = await import('@/app/api/cardprovider/webhook/route');
const { getServices } = await import('@/lib/services');

function liveHeapKb(): number {
  collect?.();
  collect?.();
  return Math.round(process.memoryUsage().heapUsed / 1024);
}

const held = () => (getServices().rateLimiter as unknown as { size?: number }).size ?? Number.NaN;
const points: { clients: number; heapKb: number; held: number }[] = [];
for (let seen = 0; seen <= clients; seen += 1) {
  if (seen % checkpoint === 0) points.push({ clients: seen, heapKb: liveHeapKb(), held: seen === 0 ? 0 : held() });
  if (seen === clients) break;
  const probe = memoryProbe();
  const response = await POST(new Request(`http://127.0.0.1:3000${probe.path}`, { method: probe.method, headers: probe.headers, body: probe.body }));
  if (response.status !== 400) throw new Error(`route memory: expected 400, got ${response.status}`);
  await response.arrayBuffer();
}
print(JSON.stringify(points));
