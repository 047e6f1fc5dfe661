/**
 * npm run setup:webhooks -- --url https://<deployment>
 *
 * Creates or updates the Stripe webhook endpoint (and ShipStation's webhooks when their credentials are
 * set) for that deployment, from the service's own configuration: the environment, or .env.local / .env.
 * docs/integrations/stripe.md says what it prints and when to run it again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseConfig } from '../lib/config';
import { parseServiceUrl, runWebhookSetup } from '../lib/webhooks/setup/setup-webhooks';

function loadDotEnv(): void {
  for (const file of ['.env.local', '.env']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
      if (!match || match[1] === undefined || process.env[match[1]] !== undefined) continue;
      process.env[match[1]] = (match[2] ?? '').replace(/^(['"])(.*)\1$/, '$2');
    }
  }
}

function argument(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index >= 0) return args[index + 1];
  return args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
}

async function main(): Promise<number> {
  loadDotEnv();
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log('Usage: npm run setup:webhooks -- --url https://<deployment>');
    return 0;
  }
  const target = parseServiceUrl(argument(args, '--url'));
  if ('problem' in target) {
    console.error(target.problem);
    return 2;
  }
  let config;
  try {
    config = parseConfig({ ...process.env, NODE_ENV: process.env.NODE_ENV === 'production' ? 'production' : 'development' });
  } catch (error) {
    console.error(error instanceof Error ? error.message : 'Invalid configuration');
    return 2;
  }
  const ok = await runWebhookSetup({
    serviceUrl: target.url,
    config,
    print: (line) => console.log(line),
  });
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  () => {
    console.error('setup:webhooks failed unexpectedly');
    process.exit(1);
  },
);
