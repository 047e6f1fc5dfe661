/**
 * npm run setup:webhooks -- --url https://<deployment>
 *
 * Creates or updates the Stripe webhook endpoint (and ShipStation's webhooks when their credentials are
 * set) for that deployment, from the service's own configuration: the environment, or .env.local / .env.
 * docs/integrations/stripe.md says what it prints and when to run it again.
 */
import { parseConfig } from '../lib/config';
import { nextEnvironment } from './configuration';
import { parseServiceUrl, runWebhookSetup } from './webhook-setup';

function argument(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index >= 0) return args[index + 1];
  return args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
}

async function main(): Promise<number> {
  nextEnvironment(process.cwd(), false);
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
