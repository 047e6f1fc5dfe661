/**
 * GET /api/cron/reconcile-shipments: ShipStation's recent shipments (V1, and V2's labels and fulfillments)
 * applied through the webhook's own markOrderShipped, for what the replay queue lost (docs/decisions.md#d26).
 * A pass fixes its window and reads it oldest first, so a cursor (page, shipments done) resumes it exactly.
 */
import { asUnit, unitDeadlineMs, worstCase } from '@/lib/cron/budget';
import type { Budget } from '@/lib/cron/reconcile-payments';
import type { ShipmentCursor, ShipmentCursorStore } from '@/lib/shared-state/shipment-cursor/shipment-cursor';
import { ServiceNotConfiguredError, ShipStationError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { pageWorstCaseMs, type ShipmentNotice, type ShipmentsPage } from '@/lib/shipping/shipstation';
import type { V2ResourceKind } from '@/lib/shipping/shipstation-v2';
import { isRetryableShipStationFailure, shipStationFailure } from '@/lib/webhooks/shipping/handle-notification';
import { markOrderShipped } from '@/lib/webhooks/shipping/mark-shipped';
import { queueForReplay } from '@/lib/shared-state/shipping-replay/replay-queue';

export const SHIPMENT_RECONCILE_NOT_CONFIGURED =
  'Shipment reconciliation needs ShipStation: set SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET, or SHIPSTATION_V2_API_KEY';

export const SHIPMENT_PAGE_SIZE = 100;

export interface PassSummary {
  checked: number;
  applied: number;
  skipped: number;
  queued: number;
  pages: number;
  complete: boolean;
  resumed: boolean;
  stoppedFor?: string;
}

export interface ShipmentReconcileSummary extends PassSummary {
  windowHours: number;
  lists?: Partial<Record<ShipmentList['name'], PassSummary>>;
}

export function shipmentsPageUrl(apiBaseUrl: string, cursor: Pick<ShipmentCursor, 'createdFrom' | 'createdTo' | 'page'>): string {
  const url = new URL(`${apiBaseUrl}/shipments`);
  url.searchParams.set('createDateStart', cursor.createdFrom);
  url.searchParams.set('createDateEnd', cursor.createdTo);
  url.searchParams.set('sortBy', 'ShipDate');
  url.searchParams.set('sortDir', 'ASC');
  url.searchParams.set('page', String(cursor.page));
  url.searchParams.set('pageSize', String(SHIPMENT_PAGE_SIZE));
  return url.href;
}

/** Whole seconds, as ShipStation's documentation's examples send them. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface ShipmentList {
  name: 'v1' | 'v2_labels' | 'v2_fulfillments';
  cursor: ShipmentCursorStore;
  pageUrl(cursor: Pick<ShipmentCursor, 'createdFrom' | 'createdTo' | 'page'>): string;
  readPage(url: string): Promise<ShipmentsPage & { malformed: number }>;
  /** V2 labels are listed without their order number: one shipment read each, before the shipment is applied. */
  complete?(notice: ShipmentNotice): Promise<ShipmentNotice>;
}

export function v2PageUrl(apiBaseUrl: string, kind: V2ResourceKind, cursor: Pick<ShipmentCursor, 'createdFrom' | 'createdTo' | 'page'>): string {
  const url = new URL(`${apiBaseUrl}/v2/${kind}`);
  const [from, to] = kind === 'labels' ? ['created_at_start', 'created_at_end'] : ['create_date_start', 'create_date_end'];
  url.searchParams.set(from as string, cursor.createdFrom);
  url.searchParams.set(to as string, cursor.createdTo);
  url.searchParams.set('sort_by', 'created_at');
  url.searchParams.set('sort_dir', 'asc');
  url.searchParams.set('page', String(cursor.page));
  url.searchParams.set('page_size', String(SHIPMENT_PAGE_SIZE));
  return url.href;
}

function listsOf(services: Services): ShipmentList[] {
  const lists: ShipmentList[] = [];
  const { shipStation, shipStationV2, config } = services;
  if (shipStation) {
    lists.push({
      name: 'v1',
      cursor: services.shipmentCursor,
      pageUrl: (cursor) => shipmentsPageUrl(config.shipping.apiBaseUrl, cursor),
      readPage: (url) => shipStation.shipmentsPage(url),
    });
  }
  if (shipStationV2) {
    for (const kind of ['labels', 'fulfillments'] as const) {
      lists.push({
        name: kind === 'labels' ? 'v2_labels' : 'v2_fulfillments',
        cursor: services.shipmentCursorsV2[kind],
        pageUrl: (cursor) => v2PageUrl(config.shippingV2.apiBaseUrl, kind, cursor),
        readPage: (url) => shipStationV2.listPage(kind, new URL(url)),
        complete: (notice) => shipStationV2.withOrderNumber(notice),
      });
    }
  }
  return lists;
}

export async function reconcileShipments(services: Services, budget: Budget, now: () => number = Date.now): Promise<ShipmentReconcileSummary> {
  const lists = listsOf(services);
  if (lists.length === 0) throw new ServiceNotConfiguredError(SHIPMENT_RECONCILE_NOT_CONFIGURED);
  const summary: ShipmentReconcileSummary = {
    checked: 0,
    applied: 0,
    skipped: 0,
    queued: 0,
    pages: 0,
    complete: true,
    resumed: false,
    windowHours: services.config.shipmentReconcileWindowHours,
  };
  for (const list of lists) {
    const pass = await reconcileList(list, services, budget, now);
    if (lists.length > 1) (summary.lists ??= {})[list.name] = pass;
    summary.checked += pass.checked;
    summary.applied += pass.applied;
    summary.skipped += pass.skipped;
    summary.queued += pass.queued;
    summary.pages += pass.pages;
    summary.resumed ||= pass.resumed;
    if (!pass.complete) {
      summary.complete = false;
      summary.stoppedFor ??= pass.stoppedFor;
    }
  }
  log.info('shipping.reconcile_summary', {
    checked: summary.checked,
    applied: summary.applied,
    skipped: summary.skipped,
    queued: summary.queued,
    pages: summary.pages,
    complete: summary.complete,
    resumed: summary.resumed,
    stoppedFor: summary.stoppedFor,
  });
  return summary;
}

async function reconcileList(list: ShipmentList, services: Services, budget: Budget, now: () => number): Promise<PassSummary> {
  const { config } = services;
  const timeoutMs = config.upstreamTimeoutMs;
  const windowMs = config.shipmentReconcileWindowHours * 3_600_000;
  const shipmentCursor = list.cursor;

  const saved = await shipmentCursor.load();
  const start = now();
  const pass = saved ?? { createdFrom: isoSeconds(start - windowMs), createdTo: isoSeconds(start), page: 1, done: 0 };
  let { page, done } = pass;
  const summary: PassSummary = {
    checked: 0,
    applied: 0,
    skipped: 0,
    queued: 0,
    pages: 0,
    complete: false,
    resumed: saved !== undefined,
  };

  const stop = async (reason: string) => {
    summary.stoppedFor = reason;
    await shipmentCursor.save({ createdFrom: pass.createdFrom, createdTo: pass.createdTo, page, done, savedAt: now() }, windowMs);
    log.warn('shipping.reconcile_stopped', { list: list.name === 'v1' ? undefined : list.name, reason, page, done, checked: summary.checked });
  };
  const stopForShipStation = async (error: ShipStationError) => {
    const failure = shipStationFailure(error);
    if (isRetryableShipStationFailure(error)) log.warn('shipping.reconcile_page_failed', { page, failure, status: error.status });
    else log.error('shipping.reconcile_page_failed', { page, failure, status: error.status });
    await stop(failure);
  };

  for (;;) {
    if (!budget.fits(pageWorstCaseMs(timeoutMs))) {
      await stop('time');
      break;
    }
    let answer;
    try {
      const url = list.pageUrl({ ...pass, page });
      answer = await asUnit(pageWorstCaseMs(timeoutMs), () => list.readPage(url));
    } catch (error) {
      if (!(error instanceof ShipStationError)) throw error;
      await stopForShipStation(error);
      break;
    }
    summary.pages += 1;

    let stopped = false;
    for (const listed of answer.notices.slice(done)) {
      const complete = listed.orderShipmentId !== undefined ? list.complete : undefined;
      const lookup = complete ? pageWorstCaseMs(timeoutMs) : 0;
      if (!budget.fits(worstCase.shipment(timeoutMs) + lookup)) {
        await stop('time');
        stopped = true;
        break;
      }
      let notice = listed;
      if (complete) {
        try {
          notice = await asUnit(lookup, () => complete(listed));
        } catch (error) {
          if (!(error instanceof ShipStationError)) throw error;
          await stopForShipStation(error);
          stopped = true;
          break;
        }
      }
      summary.checked += 1;
      const result = await asUnit(unitDeadlineMs(timeoutMs), () => markOrderShipped(notice, services));
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
    if (stopped) break;
    // An empty page ends the window whatever `pages` says, as for a batch.
    const onPage = answer.notices.length + answer.malformed + (answer.skipped ?? 0);
    if (page >= answer.pages || onPage === 0) {
      summary.complete = true;
      await shipmentCursor.clear();
      break;
    }
    page += 1;
    done = 0;
  }
  return summary;
}
