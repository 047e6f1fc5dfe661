/**
 * GET /api/cron/retry-shipping: the replay queue applied through the webhook's own markOrderShipped
 * (docs/decisions.md#d26); a failure waits longer each time, the tenth parks the entry for a person.
 */
import { CRON_MAX_DURATION_SECONDS, unitDeadlineMs, worstCase, type Budget } from '@/lib/cron/budget';
import { ShipStationError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { withRequestDeadline } from '@/lib/upstream/budget';
import { isRetryableShipStationFailure, shipStationFailure } from '@/lib/shipments/failures';
import { deliverThroughLabel } from '@/lib/shipments/mark-delivered';
import { markOrderShipped, parseOrderNumber } from '@/lib/shipments/mark-shipped';
import { MAX_REPLAY_ATTEMPTS, nextAttemptDelayMs, type ReplayEntry } from '@/lib/shared-state/shipping-replay';

/** Longer than a run may last, so an entry taken by a run is never taken by an overlapping one. */
const LEASE_MS = CRON_MAX_DURATION_SECONDS * 1000;
const STORE_BUSY = 'store:busy';
const PARKED_LISTED = 50;

/** A parked entry as the run's answer lists it. */
function describe({ id: entryId, orderId, attempts, lastFailure, firstQueuedAt }: ReplayEntry) {
  return { entryId, orderId, attempts, lastFailure, firstQueuedAt: new Date(firstQueuedAt).toISOString() };
}

export async function replayShipping(services: Services, budget: Budget, now: () => number = Date.now) {
  const queue = services.shippingReplay;
  const timeoutMs = services.config.upstreamTimeoutMs;
  const summary = {
    checked: 0,
    applied: 0,
    skipped: 0,
    retrying: 0,
    parkedNow: [] as ReturnType<typeof describe>[],
    parked: [] as ReturnType<typeof describe>[],
    parkedTotal: 0,
    waiting: 0,
    complete: true,
  };

  const failedAgain = async (entry: ReplayEntry, failure: string) => {
    const attempts = entry.attempts + 1;
    const updated = { ...entry, attempts, lastFailure: failure, nextAttemptAt: now() + nextAttemptDelayMs(attempts) };
    if (attempts >= MAX_REPLAY_ATTEMPTS) {
      await queue.park(updated);
      summary.parkedNow.push(describe(updated));
      log.error('shipping.replay_parked', { entryId: entry.id, orderId: entry.orderId, attempts, failure });
      return;
    }
    await queue.retryLater(updated);
    summary.retrying += 1;
    log.warn('shipping.replay_failed', { entryId: entry.id, orderId: entry.orderId, attempts, failure });
  };

  const triedThisRun = new Set<string>();
  /** Done with, applied or not: it leaves the queue. */
  const settled = async (entry: ReplayEntry, result: { orderId: number | undefined; outcome: string }, applied: boolean, extra = {}) => {
    await queue.remove(entry.id);
    if (applied) summary.applied += 1;
    else summary.skipped += 1;
    const line = { entryId: entry.id, orderId: result.orderId, outcome: result.outcome };
    log.info(applied ? 'shipping.replay_applied' : 'shipping.replay_settled', applied ? { ...line, ...extra } : line);
  };

  /** A batch read again: its shipments queued one by one, due now, and what it could not read kept as the entry. */
  const replayResource = async (entry: ReplayEntry, work: Extract<ReplayEntry['work'], { kind: 'resource' }>) => {
    const v2 = work.eventType.endsWith('_V2');
    const shipStation = v2 ? services.shipStationV2 : services.shipStation;
    if (!shipStation) {
      // Queued while the credentials were set: kept (and parked in time) until they are set again, never dropped.
      const hint = v2 ? 'set SHIPSTATION_V2_API_KEY' : 'set SHIPSTATION_API_KEY and SHIPSTATION_API_SECRET';
      log.warn('shipping.replay_not_configured', { entryId: entry.id, hint });
      return failedAgain(entry, 'shipstation:not_configured');
    }
    let result;
    try {
      result = await withRequestDeadline(worstCase.shipStationBatch(timeoutMs), () => shipStation.shipmentsAt(work.resourceUrl));
    } catch (error) {
      if (!(error instanceof ShipStationError)) throw error;
      if (isRetryableShipStationFailure(error)) return failedAgain(entry, shipStationFailure(error));
      await queue.remove(entry.id);
      summary.skipped += 1;
      log.error('shipping.replay_resource_refused', { entryId: entry.id, failure: error.failure, status: error.status });
      return;
    }
    for (const notice of result.notices) {
      await queue.add({
        work: { kind: 'shipment', notice },
        orderId: parseOrderNumber(notice.orderNumber),
        attempts: 0,
        lastFailure: entry.lastFailure,
        firstQueuedAt: entry.firstQueuedAt,
        nextAttemptAt: now(),
      });
    }
    const { unread } = result;
    log.info('shipping.replay_resource_read', {
      entryId: entry.id,
      shipments: result.notices.length,
      unreadFromPage: unread?.page,
      pages: unread?.pages,
      stoppedFor: unread?.reason,
    });
    if (!unread) return queue.remove(entry.id);
    const rest: ReplayEntry = { ...entry, work: { ...work, resourceUrl: unread.resourceUrl } };
    if (!unread.error) {
      // Stopped on purpose (the pages one read takes, or its time): read on at once, in this run when it has the time.
      await queue.retryLater({ ...rest, nextAttemptAt: now() });
      triedThisRun.delete(entry.id);
    } else if (isRetryableShipStationFailure(unread.error)) {
      await failedAgain(rest, shipStationFailure(unread.error));
    } else {
      await queue.remove(entry.id);
      log.error('shipping.replay_resource_refused', { entryId: entry.id, failure: unread.error.failure, status: unread.error.status, page: unread.page });
    }
  };

  for (;;) {
    if (!budget.fits(worstCase.shipment(timeoutMs))) {
      summary.complete = false;
      break;
    }
    const entry = await queue.takeDue(now(), LEASE_MS);
    if (!entry) break;
    if (triedThisRun.has(entry.id)) {
      // Failed once already in this run: handed back rather than hit a failing store twice in a row.
      await queue.retryLater({ ...entry, nextAttemptAt: now() });
      break;
    }
    triedThisRun.add(entry.id);
    if (entry.work.kind === 'resource' && !budget.fits(worstCase.shipStationBatch(timeoutMs))) {
      // A batch may need every page: handed back untouched for the next run, which starts with time to spare.
      await queue.retryLater({ ...entry, nextAttemptAt: now() });
      summary.complete = false;
      break;
    }
    summary.checked += 1;

    if (entry.work.kind === 'resource') {
      await replayResource(entry, entry.work);
      continue;
    }
    if (entry.work.kind === 'delivery') {
      const { labelId, delivery } = entry.work;
      const result = await withRequestDeadline(unitDeadlineMs(timeoutMs), () => deliverThroughLabel(labelId, delivery, services));
      const work = { ...entry.work, delivery: { ...delivery, orderNumber: result.orderNumber } };
      if (result.retryableFailure) await failedAgain({ ...entry, orderId: result.orderId, work }, result.retryableFailure);
      else await settled(entry, result, result.outcome === 'delivered' || result.outcome === 'delivered_completed');
      continue;
    }
    const notice = entry.work.notice;
    const result = await withRequestDeadline(unitDeadlineMs(timeoutMs), () => markOrderShipped(notice, services));
    if (result.retryableFailure === STORE_BUSY) {
      // Nothing reached the store, so no failed attempt: the run stops, leaving the slots to checkouts.
      await queue.retryLater({ ...entry, nextAttemptAt: now() });
      summary.checked -= 1;
      summary.complete = false;
      log.warn('shipping.replay_stopped_store_busy', { entryId: entry.id, orderId: entry.orderId });
      break;
    }
    if (result.retryableFailure) await failedAgain(entry, result.retryableFailure);
    else await settled(entry, result, result.applied === true, { attempts: entry.attempts });
  }

  summary.parked = (await queue.parked()).slice(0, PARKED_LISTED).map(describe);
  ({ parked: summary.parkedTotal, waiting: summary.waiting } = await queue.counts());
  const { checked, applied, skipped, retrying, parkedNow, parkedTotal, waiting, complete } = summary;
  log.info('shipping.replay_summary', { checked, applied, skipped, retrying, parkedNow: parkedNow.length, parkedTotal, waiting, complete });
  if (parkedTotal > 0) log.error('shipping.replay_parked_waiting', { parkedTotal });
  return summary;
}
