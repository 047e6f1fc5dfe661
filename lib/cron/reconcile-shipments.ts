/**
 * GET /api/cron/reconcile-shipments: ShipStation's recent shipments (V1, and V2's labels and fulfillments)
 * applied through the webhook's own markOrderShipped, for what the replay queue lost (docs/decisions.md#d26).
 * A pass fixes its window and reads it oldest first, so a cursor (page, shipments done) resumes it exactly.
 */
import { unitDeadlineMs, worstCase, type Budget } from '@/lib/cron/budget';
import { withRequestDeadline } from '@/lib/upstream/budget';
import type { ShipmentCursor, ShipmentCursorStore } from '@/lib/shared-state/cursor';
import { ServiceNotConfiguredError, ShipStationError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { pageWorstCaseMs, type ShipmentsPage } from '@/lib/shipping/shipstation';
import type { ShipStationV2Client, V2ResourceKind } from '@/lib/shipping/shipstation-v2';
import { isRetryableShipStationFailure, shipStationFailure } from '@/lib/shipments/failures';
import { markOrderShipped } from '@/lib/shipments/mark-shipped';
import { queueForReplay } from '@/lib/shared-state/shipping-replay';

export const SHIPMENT_RECONCILE_NOT_CONFIGURED =
  'Shipment reconciliation needs ShipStation: set SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET, or SHIPSTATION_V2_API_KEY';

export const SHIPMENT_PAGE_SIZE = 100;

type Window = Pick<ShipmentCursor, 'createdFrom' | 'createdTo' | 'page'>;
type QueryNames = readonly [from: string, to: string, sortBy: string, sortDir: string, page: string, pageSize: string];

/** A page of one list, oldest first: the query's names differ between V1, V2's labels and V2's fulfillments. */
function pageUrl(base: string, names: QueryNames, sort: readonly [string, string], cursor: Window): string {
  const url = new URL(base);
  const values = [cursor.createdFrom, cursor.createdTo, ...sort, String(cursor.page), String(SHIPMENT_PAGE_SIZE)];
  names.forEach((name, i) => url.searchParams.set(name, values[i]!));
  return url.href;
}

const V1_QUERY: QueryNames = ['createDateStart', 'createDateEnd', 'sortBy', 'sortDir', 'page', 'pageSize'];
const V1_SORT = ['ShipDate', 'ASC'] as const;
const V2_SORT = ['created_at', 'asc'] as const;
const V2_QUERY: Record<V2ResourceKind, QueryNames> = {
  labels: ['created_at_start', 'created_at_end', 'sort_by', 'sort_dir', 'page', 'page_size'],
  fulfillments: ['create_date_start', 'create_date_end', 'sort_by', 'sort_dir', 'page', 'page_size'],
};

/** Whole seconds, as ShipStation's documentation's examples send them. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface ShipmentList {
  name: 'v1' | 'v2_labels' | 'v2_fulfillments';
  cursor: ShipmentCursorStore;
  pageUrl(cursor: Window): string;
  readPage(url: string): Promise<ShipmentsPage & { malformed: number }>;
  /** V2 labels are listed without their order number: one shipment read each, before the shipment is applied. */
  complete?: ShipStationV2Client['withOrderNumber'];
}

function listsOf(services: Services): ShipmentList[] {
  const lists: ShipmentList[] = [];
  const { shipStation, shipStationV2, config } = services;
  if (shipStation) {
    lists.push({
      name: 'v1',
      cursor: services.shipmentCursor,
      pageUrl: (cursor) => pageUrl(`${config.shipping.apiBaseUrl}/shipments`, V1_QUERY, V1_SORT, cursor),
      readPage: (url) => shipStation.shipmentsPage(url),
    });
  }
  if (shipStationV2) {
    for (const kind of ['labels', 'fulfillments'] as const) {
      lists.push({
        name: kind === 'labels' ? 'v2_labels' : 'v2_fulfillments',
        cursor: services.shipmentCursorsV2[kind],
        pageUrl: (cursor) => pageUrl(`${config.shippingV2.apiBaseUrl}/v2/${kind}`, V2_QUERY[kind], V2_SORT, cursor),
        readPage: (url) => shipStationV2.listPage(kind, new URL(url)),
        complete: (notice) => shipStationV2.withOrderNumber(notice),
      });
    }
  }
  return lists;
}

/** One list's pass; the run's summary adds the passes up. */
function newPass(resumed: boolean, complete = false) {
  return { checked: 0, applied: 0, skipped: 0, queued: 0, pages: 0, complete, resumed, stoppedFor: undefined as string | undefined };
}

type PassesByList = Partial<Record<ShipmentList['name'], ReturnType<typeof newPass>>>;
const COUNTS = ['checked', 'applied', 'skipped', 'queued', 'pages'] as const;

export async function reconcileShipments(services: Services, budget: Budget, now: () => number = Date.now) {
  const lists = listsOf(services);
  if (lists.length === 0) throw new ServiceNotConfiguredError(SHIPMENT_RECONCILE_NOT_CONFIGURED);
  const windowHours = services.config.shipmentReconcileWindowHours;
  const summary = { ...newPass(false, true), windowHours, lists: undefined as PassesByList | undefined };
  for (const list of lists) {
    const pass = await reconcileList(list, services, budget, now);
    if (lists.length > 1) (summary.lists ??= {})[list.name] = pass;
    for (const count of COUNTS) summary[count] += pass[count];
    summary.resumed ||= pass.resumed;
    if (!pass.complete) {
      summary.complete = false;
      summary.stoppedFor ??= pass.stoppedFor;
    }
  }
  const { checked, applied, skipped, queued, pages, complete, resumed, stoppedFor } = summary;
  log.info('shipping.reconcile_summary', { checked, applied, skipped, queued, pages, complete, resumed, stoppedFor });
  return summary;
}

async function reconcileList(list: ShipmentList, services: Services, budget: Budget, now: () => number) {
  const { config } = services;
  const timeoutMs = config.upstreamTimeoutMs;
  const windowMs = config.shipmentReconcileWindowHours * 3_600_000;
  const saved = await list.cursor.load();
  const start = now();
  const pass = saved ?? { createdFrom: isoSeconds(start - windowMs), createdTo: isoSeconds(start), page: 1, done: 0 };
  let { page, done } = pass;
  const summary = newPass(saved !== undefined);

  const stop = async (reason: string) => {
    summary.stoppedFor = reason;
    await list.cursor.save({ createdFrom: pass.createdFrom, createdTo: pass.createdTo, page, done, savedAt: now() }, windowMs);
    log.warn('shipping.reconcile_stopped', { list: list.name === 'v1' ? undefined : list.name, reason, page, done, checked: summary.checked });
  };
  /** A ShipStation failure stops the pass where it is. */
  const readOrStop = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof ShipStationError)) throw error;
      const failure = shipStationFailure(error);
      const level = isRetryableShipStationFailure(error) ? 'warn' : 'error';
      log[level]('shipping.reconcile_page_failed', { page, failure, status: error.status });
      await stop(failure);
      return undefined;
    }
  };

  pages: for (;;) {
    if (!budget.fits(pageWorstCaseMs(timeoutMs))) {
      await stop('time');
      break;
    }
    const url = list.pageUrl({ ...pass, page });
    const answer = await readOrStop(() => withRequestDeadline(pageWorstCaseMs(timeoutMs), () => list.readPage(url)));
    if (answer === undefined) break;
    summary.pages += 1;

    for (const listed of answer.notices.slice(done)) {
      const complete = listed.orderShipmentId !== undefined ? list.complete : undefined;
      const lookup = complete ? pageWorstCaseMs(timeoutMs) : 0;
      if (!budget.fits(worstCase.shipment(timeoutMs) + lookup)) {
        await stop('time');
        break pages;
      }
      const notice = complete ? await readOrStop(() => withRequestDeadline(lookup, () => complete(listed))) : listed;
      if (notice === undefined) break pages;
      summary.checked += 1;
      const result = await withRequestDeadline(unitDeadlineMs(timeoutMs), () => markOrderShipped(notice, services));
      if (result.retryableFailure) {
        await queueForReplay(services.shippingReplay, { kind: 'shipment', notice }, { orderId: result.orderId, reason: result.retryableFailure });
        summary.queued += 1;
      } else if (result.applied) {
        summary.applied += 1;
        log.warn('shipping.reconcile_applied', { orderId: result.orderId, outcome: result.outcome });
      } else {
        summary.skipped += 1;
      }
      done += 1;
    }
    // An empty page ends the window whatever `pages` says, as for a batch.
    const onPage = answer.notices.length + answer.malformed + (answer.skipped ?? 0);
    if (page >= answer.pages || onPage === 0) {
      summary.complete = true;
      await list.cursor.clear();
      break;
    }
    page += 1;
    done = 0;
  }
  return summary;
}
