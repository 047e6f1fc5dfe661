/**
 * Shipment reconciliation (GET /api/cron/reconcile-shipments): ShipStation's
 * shipments of the last SHIPMENT_RECONCILE_WINDOW_HOURS, read from its List
 * Shipments (GET /shipments) and applied one by one through the webhook's own
 * markOrderShipped, so the order's lock and status gate decide: a shipment
 * already on its order is a no-op (one store read), one that never reached it
 * is applied now.
 *
 * This is what makes the replay queue's loss survivable. A shipment the webhook
 * could not write waits in the queue, in Redis; when Redis comes back empty
 * (flushed, restarted without persistence) the entry is gone, and ShipStation
 * never redelivers (the webhook answered 200). ShipStation itself still lists
 * the shipment, and this pass finds it. A voided shipment is noted on its
 * order and never shipped, as for the webhook (lib/webhooks/shipping/mark-shipped.ts).
 *
 * A pass fixes its window when it begins (createDateStart/createDateEnd) and
 * reads it page by page, oldest ship date first, so the pages keep their
 * contents from run to run. A run starts a page or a shipment only when its
 * worst case fits; otherwise, or when ShipStation cannot be read (its rate
 * budget spent, an outage), it stops and leaves a cursor (the page and how many
 * of its shipments are done). The next run resumes there; a run that reaches
 * the last page clears it, and the next one begins a new pass. A shipment the
 * store does not take now goes to the replay queue, as the webhook's would.
 */
import { asUnit, unitDeadlineMs, worstCase } from '@/lib/cron/budget';
import type { Budget } from '@/lib/cron/reconcile-payments';
import type { ShipmentCursor } from '@/lib/shared-state/shipment-cursor/shipment-cursor';
import { ServiceNotConfiguredError, ShipStationError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { pageWorstCaseMs } from '@/lib/shipping/shipstation';
import { isRetryableShipStationFailure, shipStationFailure } from '@/lib/webhooks/shipping/handle-notification';
import { markOrderShipped } from '@/lib/webhooks/shipping/mark-shipped';
import { queueForReplay } from '@/lib/shared-state/shipping-replay/replay-queue';

export const SHIPMENT_RECONCILE_NOT_CONFIGURED =
  'Shipment reconciliation needs ShipStation: set SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET';

/** ShipStation's default page size, and the one its documentation's examples use. */
export const SHIPMENT_PAGE_SIZE = 100;

export interface ShipmentReconcileSummary {
  /** Shipments taken in this run. */
  checked: number;
  /** Written to their order now: the webhook's write never landed, or was lost with the replay queue. */
  applied: number;
  /** Nothing to write: already on the order, the order unknown or not shippable. */
  skipped: number;
  /** The store did not take them now: queued for the replay cron. */
  queued: number;
  /** Pages read in this run. */
  pages: number;
  /** True when the run reached the end of the window; false when it stopped and left a cursor. */
  complete: boolean;
  /** Whether the run continued from an earlier run's cursor. */
  resumed: boolean;
  /** Why an incomplete run stopped: `time`, or ShipStation's failure (`shipstation:rate_limited`, …). */
  stoppedFor?: string;
  windowHours: number;
}

/** The List Shipments URL of one page of the pass. */
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

/** Whole seconds in UTC, as the documentation's examples send them (`2019-08-24T14:15:22Z`). */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export async function reconcileShipments(services: Services, budget: Budget, now: () => number = Date.now): Promise<ShipmentReconcileSummary> {
  const { config, shipmentCursor, shipStation } = services;
  if (!shipStation) throw new ServiceNotConfiguredError(SHIPMENT_RECONCILE_NOT_CONFIGURED);
  const timeoutMs = config.upstreamTimeoutMs;
  const windowMs = config.shipmentReconcileWindowHours * 3_600_000;

  const saved = await shipmentCursor.load();
  const start = now();
  const pass = saved ?? { createdFrom: isoSeconds(start - windowMs), createdTo: isoSeconds(start), page: 1, done: 0 };
  let { page, done } = pass;
  const summary: ShipmentReconcileSummary = {
    checked: 0,
    applied: 0,
    skipped: 0,
    queued: 0,
    pages: 0,
    complete: false,
    resumed: saved !== undefined,
    windowHours: config.shipmentReconcileWindowHours,
  };

  const stop = async (reason: string) => {
    summary.stoppedFor = reason;
    await shipmentCursor.save({ createdFrom: pass.createdFrom, createdTo: pass.createdTo, page, done, savedAt: now() }, windowMs);
    log.warn('shipping.reconcile_stopped', { reason, page, done, checked: summary.checked });
  };

  for (;;) {
    if (!budget.fits(pageWorstCaseMs(timeoutMs))) {
      await stop('time');
      break;
    }
    let answer;
    try {
      const url = shipmentsPageUrl(config.shipping.apiBaseUrl, { ...pass, page });
      answer = await asUnit(pageWorstCaseMs(timeoutMs), () => shipStation.shipmentsPage(url));
    } catch (error) {
      if (!(error instanceof ShipStationError)) throw error;
      const failure = shipStationFailure(error);
      // Its rate budget spent or an outage: the next run reads on from here. A refusal that stays needs a person.
      if (isRetryableShipStationFailure(error)) log.warn('shipping.reconcile_page_failed', { page, failure, status: error.status });
      else log.error('shipping.reconcile_page_failed', { page, failure, status: error.status });
      await stop(failure);
      break;
    }
    summary.pages += 1;

    let outOfTime = false;
    for (const notice of answer.notices.slice(done)) {
      if (!budget.fits(worstCase.shipment(timeoutMs))) {
        outOfTime = true;
        break;
      }
      summary.checked += 1;
      const result = await asUnit(unitDeadlineMs(timeoutMs), () => markOrderShipped(notice, services));
      if (result.retryableFailure) {
        await queueForReplay(services.shippingReplay, { kind: 'shipment', notice }, { orderId: result.orderId, reason: result.retryableFailure });
        summary.queued += 1;
      } else if (result.applied) {
        summary.applied += 1;
        // The webhook's write never landed and no replay applied it: worth a look at the queue's Redis.
        log.warn('shipping.reconcile_applied', { orderId: result.orderId, outcome: result.outcome });
      } else {
        summary.skipped += 1;
      }
      done += 1;
    }
    if (outOfTime) {
      await stop('time');
      break;
    }
    // An empty page ends the window whatever `pages` says, as for a batch.
    // Voided shipments are among the notices (each noted on its order, never shipped).
    const onPage = answer.notices.length + answer.malformed;
    if (page >= answer.pages || onPage === 0) {
      summary.complete = true;
      await shipmentCursor.clear();
      break;
    }
    page += 1;
    done = 0;
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
