/**
 * npm run token -- <orderId> [--ttl 30m]
 *
 * Prints a checkout token for an order, signed with CHECKOUT_TOKEN_SECRET
 * (read from the environment, or from .env.local / .env like Next.js does).
 * With none set, a running demo's secret (.demo/state.json, see `npm run dev`) is used.
 */
import { mintCheckoutToken } from '../lib/security/checkout-token';
import { nextEnvironment } from './configuration';
import { readDemoState } from '../stand-ins/demo/world';

function usage(message?: string): never {
  if (message) console.error(message);
  console.error('Usage: npm run token -- <orderId> [--ttl 30m]');
  process.exit(2);
}

async function main(): Promise<void> {
  nextEnvironment(process.cwd(), true);
  const args = process.argv.slice(2);
  let ttl = '30m';
  const positional: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--ttl') ttl = args[++i] ?? usage('--ttl needs a value');
    else if (arg.startsWith('--ttl=')) ttl = arg.slice('--ttl='.length);
    else if (arg === '--help' || arg === '-h') usage();
    else positional.push(arg);
  }
  const [orderArg] = positional;
  if (orderArg === undefined || positional.length > 1 || !/^[1-9]\d*$/.test(orderArg)) {
    usage('The order id must be a positive integer.');
  }
  const secret = process.env.CHECKOUT_TOKEN_SECRET || readDemoState()?.checkoutTokenSecret;
  if (!secret) usage('CHECKOUT_TOKEN_SECRET is not set (environment, .env.local or .env), and no demo is running (npm run dev).');
  const token = await mintCheckoutToken(Number(orderArg), {
    secret,
    ttl,
    issuer: process.env.CHECKOUT_TOKEN_ISSUER || undefined,
    audience: process.env.CHECKOUT_TOKEN_AUDIENCE || undefined,
  });
  process.stdout.write(`${token}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : 'Could not mint a token');
  process.exit(1);
});
