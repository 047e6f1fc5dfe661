// ShipStation's webhooks for a deployment: V1's shipped notification with SHIPPING_WEBHOOK_SECRET in the URL (V1 sends
// no custom header), V2's environment webhooks signed by ShipStation. A failure names the operation and status, never the body.
import { z } from 'zod';
import type { Config } from '../lib/config';
import { send, type UpstreamAnswer } from '../lib/upstream/node-http';
import { parsedUrl, webhookTarget } from '../lib/webhooks/setup/events';

const FRIENDLY_NAME = 'Checkout payment service';

const SHIPSTATION_WEBHOOK_PATH = '/api/shipstation/webhook';
/** V1: one shipped event (each delivery costs a read of ShipStation, so not both shipped events). */
const SHIPSTATION_V1_EVENT = 'SHIP_NOTIFY';
const SHIPSTATION_V1_SHIPPED_EVENTS: readonly string[] = ['SHIP_NOTIFY', 'ITEM_SHIP_NOTIFY'];
/** V2, as its create call names them (the deliveries say FULFILLMENT_SHIPPED_V2, …). */
const SHIPSTATION_V2_EVENTS: readonly string[] = ['fulfillment_shipped_v2', 'label_created_v2', 'track_event_v2'];

/** A setup call refused or unanswered: only the setup scripts throw it, so it lives with them. */
export class ShipStationSetupError extends Error {
  constructor(operation: string, status: number | undefined) {
    super(`ShipStation ${operation} failed${status === undefined ? ' (no answer)' : ` (HTTP ${status})`}`);
    this.name = 'ShipStationSetupError';
  }
}

type Call = (operation: string, url: string, write?: { method: string; body?: unknown }) => Promise<UpstreamAnswer>;

/** One API's calls, each with its own deadline; an answer other than a 2xx (a redirect included) fails with its status. */
function sender(authorization: Record<string, string>, timeoutMs: number): Call {
  const headers = { ...authorization, 'content-type': 'application/json' };
  return async (operation, url, write) => {
    let answer: UpstreamAnswer;
    try {
      const body = write?.body === undefined ? undefined : JSON.stringify(write.body);
      answer = await send({ url: new URL(url), method: write?.method ?? 'GET', headers, body, timeoutMs });
    } catch {
      throw new ShipStationSetupError(operation, undefined);
    }
    if (answer.status < 200 || answer.status > 299) throw new ShipStationSetupError(operation, answer.status);
    return answer;
  };
}

async function list<T>(call: Call, operation: string, url: string, schema: z.ZodType<T>): Promise<T> {
  const answer = await call(operation, url);
  try {
    return schema.parse(JSON.parse(answer.body.toString('utf8')));
  } catch {
    throw new ShipStationSetupError(`${operation}: unexpected answer`, answer.status);
  }
}

const samePlace = (url: string, target: string) => {
  const a = parsedUrl(url);
  const b = parsedUrl(target);
  return a !== undefined && b !== undefined && a.origin === b.origin && a.pathname.replace(/\/+$/, '') === b.pathname;
};

const v1List = z.object({
  webhooks: z.array(z.looseObject({ WebHookID: z.number(), HookType: z.string(), Url: z.string(), Active: z.boolean().optional() })),
});

/**
 * What was done or needs doing, in words (never a URL carrying the secret; empty when up to date), or undefined without keys.
 * SHIPPING_WEBHOOK_SECRET's first signs a new subscription; any of them counts as current. A subscription carrying a secret
 * no longer configured can only be refused (401): unsubscribed once a current one exists.
 */
export async function setupShipStationV1(serviceUrl: string, config: Config): Promise<string[] | undefined> {
  const { apiKey, apiSecret, apiBaseUrl, webhookSecrets: secrets } = config.shipping;
  if (!apiKey || !apiSecret) return undefined;
  const [secret] = secrets;
  if (!secret) return ['V1 skipped: set SHIPPING_WEBHOOK_SECRET first (the subscription carries it)'];
  const report: string[] = [];
  const base = apiBaseUrl.replace(/\/+$/, '');
  const call = sender({ authorization: `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}` }, config.upstreamTimeoutMs);
  const target = webhookTarget(serviceUrl, SHIPSTATION_WEBHOOK_PATH);
  const { webhooks } = await list(call, 'list webhooks', `${base}/webhooks`, v1List);
  const ours = webhooks.filter((hook) => SHIPSTATION_V1_SHIPPED_EVENTS.includes(hook.HookType) && samePlace(hook.Url, target));
  const carries = (hook: (typeof ours)[number]) => secrets.includes(parsedUrl(hook.Url)?.searchParams.get('secret') ?? '');
  const current = ours.filter(carries);
  if (current.length === 0) {
    const url = new URL(target);
    url.searchParams.set('secret', secret);
    const body = { target_url: url.toString(), event: SHIPSTATION_V1_EVENT, store_id: null, friendly_name: FRIENDLY_NAME };
    await call('subscribe webhook', `${base}/webhooks/subscribe`, { method: 'POST', body });
    report.push(`V1: subscribed ${SHIPSTATION_V1_EVENT} to ${SHIPSTATION_WEBHOOK_PATH}?secret=… (the first SHIPPING_WEBHOOK_SECRET)`);
  }
  for (const stale of ours.filter((hook) => !carries(hook))) {
    await call('unsubscribe webhook', `${base}/webhooks/${stale.WebHookID}`, { method: 'DELETE' });
    report.push(`V1: unsubscribed webhook ${stale.WebHookID}, whose secret is no longer in SHIPPING_WEBHOOK_SECRET`);
  }
  for (const inactive of current.filter((hook) => hook.Active === false)) {
    report.push(`V1: webhook ${inactive.WebHookID} is inactive; V1 webhooks are switched on only in ShipStation's settings (Integrations → Integration Partners)`);
  }
  return report;
}

const v2Hook = z.looseObject({ webhook_id: z.string(), url: z.string(), event: z.string() });

/** One environment webhook per event at the deployment's URL; one on this host at another path is moved there. */
export async function setupShipStationV2(serviceUrl: string, config: Config): Promise<string[] | undefined> {
  const { apiKey, apiBaseUrl } = config.shippingV2;
  if (!apiKey) return undefined;
  const report: string[] = [];
  const base = `${apiBaseUrl.replace(/\/+$/, '')}/v2/environment/webhooks`;
  const call = sender({ 'api-key': apiKey }, config.upstreamTimeoutMs);
  const target = webhookTarget(serviceUrl, SHIPSTATION_WEBHOOK_PATH);
  const hooks = await list(call, 'list environment webhooks', base, z.array(v2Hook));
  for (const event of SHIPSTATION_V2_EVENTS) {
    const forEvent = hooks.filter((hook) => hook.event.toLowerCase() === event);
    if (forEvent.some((hook) => samePlace(hook.url, target))) continue;
    const onThisHost = forEvent.find((hook) => parsedUrl(hook.url)?.origin === parsedUrl(target)?.origin);
    if (onThisHost) {
      const url = `${base}/${encodeURIComponent(onThisHost.webhook_id)}`;
      await call('update environment webhook', url, { method: 'PUT', body: { url: target } });
      report.push(`V2: ${event} (${onThisHost.webhook_id}) now points at ${SHIPSTATION_WEBHOOK_PATH}`);
      continue;
    }
    await call('create environment webhook', base, { method: 'POST', body: { name: FRIENDLY_NAME, event, url: target } });
    report.push(`V2: created the ${event} webhook`);
  }
  return report;
}
