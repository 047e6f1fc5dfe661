// `npm run setup:webhooks -- --url <deployment>` (docs/decisions.md#d39), with the scripts because the service never runs it
// (lib/webhooks/setup/ keeps what health shares): a new endpoint's signing secret is printed once, here only.
import { requireSetting, type Config } from '../lib/config';
import { CardProviderError, ServiceError, ServiceNotConfiguredError } from '../lib/errors';
import { STRIPE_SDK_API_VERSION, stripeWebhookEvents } from '../lib/webhooks/setup/events';
import { setupShipStationV1, setupShipStationV2, ShipStationSetupError } from './shipstation-webhooks';
import { setupStripeWebhook, webhookUrl, type StripeSetupReport } from '../lib/webhooks/setup/stripe-setup';

export interface SetupOptions {
  serviceUrl: string;
  config: Config;
  print: (line: string) => void;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The deployment's base URL from `--url`: https:// (http:// for a local one), no path to the webhook, query or fragment. */
export function parseServiceUrl(raw: string | undefined): { url: string } | { problem: string } {
  const usage = 'give the deployment\'s base URL: npm run setup:webhooks -- --url https://pay.example.com';
  if (!raw) return { problem: `--url is missing: ${usage}` };
  if (!URL.canParse(raw)) return { problem: `--url is not a URL: ${usage}` };
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return { problem: `--url must be https:// (Stripe delivers live events over HTTPS only): ${usage}` };
  if (url.search || url.hash || url.username || url.password) return { problem: `--url must have no query, fragment or credentials: ${usage}` };
  if (/\/api\//.test(url.pathname)) return { problem: `--url must be the deployment's base URL, not a route: ${usage}` };
  return { url: `${url.origin}${url.pathname.replace(/\/+$/, '')}` };
}

function printStripe(report: StripeSetupReport, options: SetupOptions, events: readonly string[]): void {
  const { print } = options;
  print(`Stripe: endpoint ${report.endpointId} → ${webhookUrl(options.serviceUrl)} (API version ${STRIPE_SDK_API_VERSION}; events: ${events.join(', ')})`);
  for (const change of report.changes.length > 0 ? report.changes : ['up to date']) print(`  ${change}`);
  if (report.newSecret) {
    print('');
    print('  Signing secret of the new endpoint (printed this once; the Stripe Dashboard can reveal it again):');
    print(`    ${report.newSecret}`);
    print('  Put it in STRIPE_WEBHOOK_SECRET where the service runs (e.g. Vercel → Settings → Environment Variables), then redeploy.');
    if (report.waiting.length > 0) {
      print('  Keep the old endpoint\'s secret beside it while both deliver, comma-separated: STRIPE_WEBHOOK_SECRET=<old secret>,<new secret>.');
      print('  Then run this command again with that environment: it removes the old endpoint once the deployment accepts the new secret.');
    }
    print('');
  }
  for (const { id, why } of report.waiting) print(`  old endpoint ${id} kept: ${why}`);
  for (const { id, url } of report.elsewhere) {
    print(`  note: ${id} points at another host (${new URL(url).host}); left as it is: delete it in the Stripe Dashboard if that deployment is gone`);
  }
}

/** Each setup resolves to undefined when its credentials are not set. */
const SHIPSTATION = [
  { name: 'V1', setup: setupShipStationV1, unset: 'SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET are not both set' },
  { name: 'V2', setup: setupShipStationV2, unset: 'SHIPSTATION_V2_API_KEY is not set' },
];

export async function runWebhookSetup(options: SetupOptions): Promise<boolean> {
  const { config, print } = options;
  let ok = true;
  const fail = (provider: string, error: unknown) => {
    ok = false;
    // Kinds and statuses only: an upstream's body or a secret never reaches the output.
    const what =
      error instanceof ShipStationSetupError || error instanceof ServiceNotConfiguredError
        ? error.message
        : error instanceof CardProviderError
          ? `${error.operation}: ${[error.type, error.status, error.code].filter((v) => v !== undefined).join(' ')}`
          : error instanceof ServiceError
            ? error.kind
            : 'unexpected error';
    print(`${provider}: failed (${what})`);
  };

  try {
    const card = requireSetting(config, 'card');
    const events = stripeWebhookEvents(config);
    const wanted = { serviceUrl: options.serviceUrl, events, apiVersion: STRIPE_SDK_API_VERSION };
    const report = await setupStripeWebhook(card, wanted, config.upstreamTimeoutMs);
    printStripe(report, options, events);
  } catch (error) {
    fail('Stripe', error);
  }

  for (const { name, setup, unset } of SHIPSTATION) {
    try {
      const lines = await setup(options.serviceUrl, config);
      if (!lines) {
        print(`ShipStation ${name}: skipped (${unset})`);
        continue;
      }
      print(`ShipStation ${name}:`);
      for (const line of lines.length > 0 ? lines : ['up to date']) print(`  ${line}`);
    } catch (error) {
      fail(`ShipStation ${name}`, error);
    }
  }
  return ok;
}
