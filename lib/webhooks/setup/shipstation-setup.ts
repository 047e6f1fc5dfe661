// ShipStation's webhooks for a deployment: V1's shipped notification with SHIPPING_WEBHOOK_SECRET in the URL (V1 sends
// no custom header), V2's environment webhooks signed by ShipStation. A failure names the operation and status, never the body.
import { z } from 'zod';
import { ShipStationSetupError } from '@/lib/errors';
import { SHIPSTATION_V1_EVENT, SHIPSTATION_V1_SHIPPED_EVENTS, SHIPSTATION_V2_EVENTS, SHIPSTATION_WEBHOOK_PATH } from '@/lib/webhooks/setup/events';

const FRIENDLY_NAME = 'Checkout payment service';

export interface ShipStationSetupReport {
  /** What was done, in words (never a URL carrying the secret); empty when up to date. */
  changes: string[];
  notes: string[];
}

async function request(operation: string, url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  let answer: Response;
  try {
    answer = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    throw new ShipStationSetupError(operation, undefined);
  }
  if (!answer.ok) {
    await answer.arrayBuffer().catch(() => undefined);
    throw new ShipStationSetupError(operation, answer.status);
  }
  return answer;
}

async function readJson<T>(operation: string, answer: Response, schema: z.ZodType<T>): Promise<T> {
  const result = schema.safeParse(await answer.json().catch(() => undefined));
  if (!result.success) throw new ShipStationSetupError(`${operation}: unexpected answer`, answer.status);
  return result.data;
}

const parsed = (url: string) => {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
};
const samePlace = (url: string, target: string) => {
  const a = parsed(url);
  const b = parsed(target);
  return a !== undefined && b !== undefined && a.origin === b.origin && a.pathname.replace(/\/+$/, '') === b.pathname;
};

const v1List = z.object({
  webhooks: z.array(z.looseObject({ WebHookID: z.number(), HookType: z.string(), Url: z.string(), Active: z.boolean().optional() })),
});

export interface V1Settings {
  serviceUrl: string;
  apiBaseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** SHIPPING_WEBHOOK_SECRET: the first signs new subscriptions; any of them counts as current. */
  secrets: readonly string[];
  timeoutMs: number;
}

/** A subscription carrying a secret no longer configured can only be refused (401): unsubscribed once a current one exists. */
export async function setupShipStationV1(settings: V1Settings): Promise<ShipStationSetupReport> {
  const report: ShipStationSetupReport = { changes: [], notes: [] };
  const [secret] = settings.secrets;
  if (!secret) {
    report.notes.push('V1 skipped: set SHIPPING_WEBHOOK_SECRET first (the subscription carries it)');
    return report;
  }
  const base = settings.apiBaseUrl.replace(/\/+$/, '');
  const headers = {
    authorization: `Basic ${Buffer.from(`${settings.apiKey}:${settings.apiSecret}`).toString('base64')}`,
    'content-type': 'application/json',
  };
  const target = `${settings.serviceUrl.replace(/\/+$/, '')}${SHIPSTATION_WEBHOOK_PATH}`;
  const list = await readJson('list webhooks', await request('list webhooks', `${base}/webhooks`, { headers }, settings.timeoutMs), v1List);
  const ours = list.webhooks.filter((hook) => SHIPSTATION_V1_SHIPPED_EVENTS.includes(hook.HookType) && samePlace(hook.Url, target));
  const carries = (hook: (typeof ours)[number]) => settings.secrets.includes(parsed(hook.Url)?.searchParams.get('secret') ?? '');
  const current = ours.filter(carries);
  if (current.length === 0) {
    const url = new URL(target);
    url.searchParams.set('secret', secret);
    await request(
      'subscribe webhook',
      `${base}/webhooks/subscribe`,
      { method: 'POST', headers, body: JSON.stringify({ target_url: url.toString(), event: SHIPSTATION_V1_EVENT, store_id: null, friendly_name: FRIENDLY_NAME }) },
      settings.timeoutMs,
    );
    report.changes.push(`V1: subscribed ${SHIPSTATION_V1_EVENT} to ${SHIPSTATION_WEBHOOK_PATH}?secret=… (the first SHIPPING_WEBHOOK_SECRET)`);
  }
  for (const stale of ours.filter((hook) => !carries(hook))) {
    await request('unsubscribe webhook', `${base}/webhooks/${stale.WebHookID}`, { method: 'DELETE', headers }, settings.timeoutMs);
    report.changes.push(`V1: unsubscribed webhook ${stale.WebHookID}, whose secret is no longer in SHIPPING_WEBHOOK_SECRET`);
  }
  for (const inactive of current.filter((hook) => hook.Active === false)) {
    report.notes.push(`V1: webhook ${inactive.WebHookID} is inactive; V1 webhooks are switched on only in ShipStation's settings (Integrations → Integration Partners)`);
  }
  return report;
}

const v2Hook = z.looseObject({ webhook_id: z.string(), url: z.string(), event: z.string() });

export interface V2Settings {
  serviceUrl: string;
  apiBaseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

/** One environment webhook per event at the deployment's URL; one on this host at another path is moved there. */
export async function setupShipStationV2(settings: V2Settings): Promise<ShipStationSetupReport> {
  const report: ShipStationSetupReport = { changes: [], notes: [] };
  const base = `${settings.apiBaseUrl.replace(/\/+$/, '')}/v2/environment/webhooks`;
  const headers = { 'api-key': settings.apiKey, 'content-type': 'application/json' };
  const target = `${settings.serviceUrl.replace(/\/+$/, '')}${SHIPSTATION_WEBHOOK_PATH}`;
  const hooks = await readJson('list environment webhooks', await request('list environment webhooks', base, { headers }, settings.timeoutMs), z.array(v2Hook));
  for (const event of SHIPSTATION_V2_EVENTS) {
    const forEvent = hooks.filter((hook) => hook.event.toLowerCase() === event);
    if (forEvent.some((hook) => samePlace(hook.url, target))) continue;
    const onThisHost = forEvent.find((hook) => parsed(hook.url)?.origin === parsed(target)?.origin);
    if (onThisHost) {
      await request(
        'update environment webhook',
        `${base}/${encodeURIComponent(onThisHost.webhook_id)}`,
        { method: 'PUT', headers, body: JSON.stringify({ url: target }) },
        settings.timeoutMs,
      );
      report.changes.push(`V2: ${event} (${onThisHost.webhook_id}) now points at ${SHIPSTATION_WEBHOOK_PATH}`);
      continue;
    }
    await request(
      'create environment webhook',
      base,
      { method: 'POST', headers, body: JSON.stringify({ name: FRIENDLY_NAME, event, url: target }) },
      settings.timeoutMs,
    );
    report.changes.push(`V2: created the ${event} webhook`);
  }
  return report;
}
