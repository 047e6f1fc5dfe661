/**
 * GET /api/cron/reconcile-payments: Stripe's recent payment events applied through the webhook's own
 * code and exactly-once guard (docs/decisions.md#d12); a run out of time leaves a cursor the next resumes.
 */
import { unitDeadlineMs, worstCase, type Budget } from '@/lib/cron/budget';
import { CardProviderError, ServiceError, StoreBusyError } from '@/lib/errors';
import { log } from '@/lib/log';
import type { Services } from '@/lib/services';
import { withRequestDeadline } from '@/lib/upstream/budget';
import { applyCardEvent, handledEventTypes } from '@/lib/card-payments/apply-event';

const PAGE_SIZE = 100;

export async function reconcilePayments(services: Services, budget: Budget, now: () => number = Date.now) {
  const { config, reconcileCursor } = services;
  const timeoutMs = config.upstreamTimeoutMs;
  const windowMs = config.reconcileWindowHours * 3_600_000;
  const createdFrom = Math.floor((now() - windowMs) / 1000);
  const card = await services.card();

  const saved = await reconcileCursor.load();
  let startingAfter = saved?.startingAfter;
  const summary = {
    checked: 0,
    applied: 0,
    skipped: 0,
    failed: [] as { eventId: string; reason: string }[],
    complete: false,
    resumed: saved !== undefined,
    windowHours: config.reconcileWindowHours,
  };

  /** The next run resumes after the last event this one finished. */
  const stop = async (event: 'reconcile.stopped_for_time' | 'reconcile.stopped_store_busy') => {
    if (startingAfter) await reconcileCursor.save({ startingAfter, savedAt: now() }, windowMs);
    log.warn(event, { checked: summary.checked, resumeAfter: startingAfter });
  };

  pages: for (;;) {
    if (!budget.fits(worstCase.eventPage(timeoutMs))) {
      await stop('reconcile.stopped_for_time');
      break;
    }
    let page;
    try {
      const after = startingAfter;
      page = await withRequestDeadline(worstCase.eventPage(timeoutMs), () =>
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

    for (const event of page.events) {
      if (!budget.fits(worstCase.cardEvent(timeoutMs))) {
        await stop('reconcile.stopped_for_time');
        break pages;
      }
      summary.checked += 1;
      const context: { orderId?: number } = {};
      try {
        const apply = () => applyCardEvent(event, services, context);
        const { outcome } = await withRequestDeadline(unitDeadlineMs(timeoutMs), apply);
        if (outcome.changedOrder) {
          summary.applied += 1;
          log.warn('reconcile.event_applied', { eventId: event.id, eventType: event.type, orderId: context.orderId, outcome: outcome.name });
        } else {
          summary.skipped += 1;
        }
      } catch (error) {
        if (error instanceof StoreBusyError) {
          // Every store slot taken: the rest wait for the next run rather than take room from checkouts.
          summary.checked -= 1;
          await stop('reconcile.stopped_store_busy');
          break pages;
        }
        const reason = error instanceof ServiceError ? error.reasonCode : 'unexpected';
        summary.failed.push({ eventId: event.id, reason });
        log.error('reconcile.event_failed', { eventId: event.id, eventType: event.type, orderId: context.orderId, reason });
      }
      startingAfter = event.id;
    }
    if (!page.hasMore) {
      summary.complete = true;
      await reconcileCursor.clear();
      break;
    }
  }

  const { checked, applied, skipped, failed, complete } = summary;
  log.info('reconcile.summary', { checked, applied, skipped, failed: failed.length, complete, resumed: summary.resumed });
  return summary;
}
