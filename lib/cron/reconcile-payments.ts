/**
 * Payment reconciliation (GET /api/cron/reconcile-payments): the card
 * provider's succeeded and failed payment events of the last
 * RECONCILE_WINDOW_HOURS, applied through exactly the webhook's code and
 * exactly-once guard (lib/webhooks/card/handle-event.ts). An event the
 * webhook already applied is found remembered, or its receipt on the order,
 * and skipped; one it never got (endpoint misconfigured, secret rotated, an
 * outage longer than the provider's retries) is applied now, so no paid order
 * stays `pending`. The order decides, not the memory: after a Redis flush or
 * a restart without Redis, every event of the window is checked against its
 * order's receipts and applied only when they lack it.
 *
 * The provider lists newest first. A run stops before its time is up and
 * leaves a cursor (the last event it finished); the next run resumes after
 * it, and a run that reaches the end of the window clears it, so the next one
 * starts again from the newest event. An event that failed is not remembered
 * and is tried again on the next full pass, for as long as it is in the window.
 */
import { asUnit, unitDeadlineMs, worstCase, type RunBudget } from '@/lib/cron/budget';
import { CardProviderError, ServiceError, StoreBusyError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { applyCardEvent, handledEventTypes } from '@/lib/webhooks/card/handle-event';

/** Stripe's largest page. */
const PAGE_SIZE = 100;

export interface FailedEvent {
  eventId: string;
  /** An identifier of what failed (`store:unavailable`, `order_busy`, …), never a message from upstream. */
  reason: string;
}

export interface ReconcileSummary {
  checked: number;
  applied: number;
  skipped: number;
  failed: FailedEvent[];
  /** True when the run reached the end of the window; false when it stopped for time and left a cursor. */
  complete: boolean;
  /** Whether the run continued from an earlier run's cursor. */
  resumed: boolean;
  windowHours: number;
}

export type Budget = Pick<RunBudget, 'fits'>;

function reasonOf(error: unknown): string {
  return error instanceof ServiceError ? error.reasonCode : 'unexpected';
}

export async function reconcilePayments(services: Services, budget: Budget, now: () => number = Date.now): Promise<ReconcileSummary> {
  const { config, reconcileCursor } = services;
  const timeoutMs = config.upstreamTimeoutMs;
  const windowMs = config.reconcileWindowHours * 3_600_000;
  const createdFrom = Math.floor((now() - windowMs) / 1000);
  const card = await services.card();

  const saved = await reconcileCursor.load();
  let startingAfter = saved?.startingAfter;
  const summary: ReconcileSummary = {
    checked: 0,
    applied: 0,
    skipped: 0,
    failed: [],
    complete: false,
    resumed: saved !== undefined,
    windowHours: config.reconcileWindowHours,
  };

  const stopForTime = async () => {
    if (startingAfter) await reconcileCursor.save({ startingAfter, savedAt: now() }, windowMs);
    log.warn('reconcile.stopped_for_time', { checked: summary.checked, resumeAfter: startingAfter });
  };

  for (;;) {
    if (!budget.fits(worstCase.eventPage(timeoutMs))) {
      await stopForTime();
      break;
    }
    let page;
    try {
      const after = startingAfter;
      page = await asUnit(worstCase.eventPage(timeoutMs), () =>
        card.listEvents({ types: handledEventTypes(services.config), createdFrom, limit: PAGE_SIZE, startingAfter: after }),
      );
    } catch (error) {
      // A cursor the provider no longer knows (events are kept 30 days) would block every run: start over.
      if (error instanceof CardProviderError && error.code === 'resource_missing' && startingAfter) {
        log.warn('reconcile.cursor_unknown', { cursor: startingAfter });
        await reconcileCursor.clear();
        startingAfter = undefined;
        summary.resumed = false;
        continue;
      }
      throw error;
    }

    let outOfTime = false;
    let storeBusy = false;
    for (const event of page.events) {
      if (!budget.fits(worstCase.cardEvent(timeoutMs))) {
        outOfTime = true;
        break;
      }
      summary.checked += 1;
      const context: { orderId?: number } = {};
      try {
        const { outcome } = await asUnit(unitDeadlineMs(timeoutMs), () => applyCardEvent(event, services, context));
        if (outcome.changedOrder) {
          summary.applied += 1;
          // The webhook never applied this one: worth a look at the endpoint's deliveries.
          log.warn('reconcile.event_applied', { eventId: event.id, eventType: event.type, orderId: context.orderId, outcome: outcome.name });
        } else {
          summary.skipped += 1;
        }
      } catch (error) {
        if (error instanceof StoreBusyError) {
          // Every store slot is taken (a flash sale): this event and the rest wait for the next run,
          // which resumes here, rather than fail one by one and leave the checkouts less room.
          summary.checked -= 1;
          storeBusy = true;
          break;
        }
        const reason = reasonOf(error);
        summary.failed.push({ eventId: event.id, reason });
        log.error('reconcile.event_failed', { eventId: event.id, eventType: event.type, orderId: context.orderId, reason });
      }
      startingAfter = event.id;
    }
    if (outOfTime) {
      await stopForTime();
      break;
    }
    if (storeBusy) {
      if (startingAfter) await reconcileCursor.save({ startingAfter, savedAt: now() }, windowMs);
      log.warn('reconcile.stopped_store_busy', { checked: summary.checked, resumeAfter: startingAfter });
      break;
    }
    if (!page.hasMore) {
      summary.complete = true;
      await reconcileCursor.clear();
      break;
    }
  }

  log.info('reconcile.summary', {
    checked: summary.checked,
    applied: summary.applied,
    skipped: summary.skipped,
    failed: summary.failed.length,
    complete: summary.complete,
    resumed: summary.resumed,
  });
  return summary;
}
