/** docs/integrations/stripe.md's event table is the list the setup command subscribes, for each configuration. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptureSetting, LifecycleEventSetting } from '@/lib/config';
import { LIFECYCLE_EVENT_SETTINGS } from '@/lib/config';
import { stripeWebhookEvents } from '@/lib/webhooks/setup/events';

const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/integrations/stripe.md'), 'utf8');

/** The table's rows: first cell → the event names of the second. */
function documentedRows(): Map<string, string[]> {
  const table = /<!-- events:start -->([\s\S]*?)<!-- events:end -->/.exec(doc)?.[1] ?? '';
  const rows = new Map<string, string[]>();
  for (const line of table.split('\n').filter((l) => l.startsWith('|')).slice(2)) {
    const [setting = '', events = ''] = line.split('|').slice(1).map((cell) => cell.trim());
    rows.set(setting, [...events.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1]!).sort());
  }
  return rows;
}

const events = (lifecycle: LifecycleEventSetting[] = [], capture: CaptureSetting = 'automatic') =>
  stripeWebhookEvents({ lifecycleEvents: new Set(lifecycle), capture });
const added = (more: string[]) => more.filter((type) => !events().includes(type)).sort();

describe("the Stripe event list in the docs", () => {
  it('lists the events handled with every setting off', () => {
    expect(documentedRows().get('always')).toEqual(events());
  });

  it('lists what each STRIPE_CAPTURE other than automatic adds, the same for both', () => {
    expect(added(events([], 'manual'))).toEqual(added(events([], 'on_shipment')));
    expect(documentedRows().get('`STRIPE_CAPTURE=on_shipment` or `manual`')).toEqual(added(events([], 'manual')));
  });

  it.each(LIFECYCLE_EVENT_SETTINGS.map((word) => [word]))('lists what CARD_LIFECYCLE_EVENTS=%s adds', (word) => {
    expect(documentedRows().get(`\`CARD_LIFECYCLE_EVENTS\` with \`${word}\``)).toEqual(added(events([word])));
  });

  it('has no row the code does not know', () => {
    expect(documentedRows().size).toBe(2 + LIFECYCLE_EVENT_SETTINGS.length);
  });
});
