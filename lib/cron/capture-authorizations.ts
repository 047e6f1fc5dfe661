/**
 * GET /api/cron/capture-authorizations: card authorizations lapse 7 days after
 * they were made, and a lapsed one can never be charged. Every run lists the
 * intents created between 7 days and AUTHORIZATION_EXPIRY_HOURS (144 by
 * default) ago, and for each one still `requires_capture` that names an order:
 *
 * - AUTHORIZATION_EXPIRY_ACTION=capture: captures it, under the order's lock,
 *   for the order's total as the store holds it (the same capture as shipping
 *   and the shop's "Capture charge"), when the order still waits for it
 *   (on hold for its authorization alone); `payment_intent.succeeded` then
 *   records the payment and the order ships as any paid order.
 * - `report` (the default), and every authorization the capture could not
 *   take (an order cancelled meanwhile, a refusal, Stripe down): an error-level
 *   log line `authorization.expiring` and a private order note telling the
 *   shop to capture or cancel, written once (shop-note.ts), logged on every run
 *   until the authorization is settled. Nothing lapses silently.
 *
 * Stripe's list of payment intents filters by creation time only (no status
 * filter), newest first, 100 a page, paged with `starting_after`. The window is
 * one day wide at the defaults, so a run stopped for time starts over on the next
 * (hourly, vercel.json) instead of keeping a cursor.
 */
import { asUnit, unitDeadlineMs, worstCase, type RunBudget } from '@/lib/cron/budget';
import { ServiceError, StoreCallbackRefusedError } from '@/lib/errors';
import { log } from '@/lib/log';
import { formatMinorUnits } from '@/lib/money';
import { shopNotes } from '@/lib/orders/notes';
import { shopOrderId } from '@/lib/card/events';
import type { PaymentIntentSummary } from '@/lib/card/stripe';
import type { Services } from '@/lib/services';
import { captureOrderAuthorization } from '@/lib/store-callbacks/authorization';
import { heldForCapture } from '@/lib/webhooks/card/payment-authorized';
import { addShopNoteOnce } from '@/lib/webhooks/card/shop-note';

/** Authorizations lapse after 7 days. */
export const AUTHORIZATION_LIFETIME_HOURS = 168;
const PAGE_SIZE = 100;

export interface AuthorizationSummary {
  action: 'capture' | 'report';
  ageHours: number;
  /** Uncaptured authorizations found in the window. */
  checked: number;
  captured: number;
  reported: number;
  failed: { intentId: string; orderId: number; reason: string }[];
  complete: boolean;
}

function reasonOf(error: unknown): string {
  if (error instanceof StoreCallbackRefusedError) return `refused:${typeof error.details?.code === 'string' ? error.details.code : 'order'}`;
  return error instanceof ServiceError ? error.reasonCode : 'unexpected';
}

type Intent = PaymentIntentSummary & { created: number };

export async function captureAuthorizations(
  services: Services,
  budget: Pick<RunBudget, 'fits'>,
  now: () => number = Date.now,
): Promise<AuthorizationSummary> {
  const { action, ageHours } = services.config.authorizationExpiry;
  const timeoutMs = services.config.upstreamTimeoutMs;
  const nowSeconds = Math.floor(now() / 1000);
  const card = await services.card();
  const summary: AuthorizationSummary = { action, ageHours, checked: 0, captured: 0, reported: 0, failed: [], complete: false };

  /** The shop decides: an error line on every run, a private note once. */
  const report = async (intent: Intent, orderId: number, why: string) => {
    const hours = Math.floor((nowSeconds - intent.created) / 3600);
    log.error('authorization.expiring', { orderId, intentId: intent.id, ageHours: hours, amount: intent.amountCapturable, currency: intent.currency, why });
    const amount = `${formatMinorUnits(intent.amountCapturable, intent.currency.toUpperCase())} ${intent.currency.toUpperCase()}`;
    await addShopNoteOnce(services.store(), orderId, shopNotes.authorizationExpiring(intent.id, amount, hours));
    summary.reported += 1;
  };

  const settle = async (intent: Intent, orderId: number) => {
    if (action === 'report') return report(intent, orderId, 'setting');
    const outcome = await services.orderLocks.withOrderLock(orderId, async () => {
      const order = await services.store().getOrder(orderId);
      if (!heldForCapture(order)) return 'not_held' as const;
      const captured = await captureOrderAuthorization(order, services, 'expiry-capture');
      log.warn('authorization.captured_before_expiry', { orderId, intentId: intent.id, amount: captured.amount, outcome: captured.outcome });
      return 'captured' as const;
    });
    if (outcome === 'captured') summary.captured += 1;
    // Cancelled, refunded or moved by the shop meanwhile: capturing would charge an order the shop let go.
    else await report(intent, orderId, 'order_not_waiting');
  };

  let startingAfter: string | undefined;
  for (;;) {
    if (!budget.fits(worstCase.eventPage(timeoutMs))) break;
    const after = startingAfter;
    const page = await asUnit(worstCase.eventPage(timeoutMs), () =>
      card.listPaymentIntents({
        createdFrom: nowSeconds - AUTHORIZATION_LIFETIME_HOURS * 3600,
        createdTo: nowSeconds - ageHours * 3600,
        limit: PAGE_SIZE,
        startingAfter: after,
      }),
    );
    let outOfTime = false;
    for (const intent of page.intents) {
      startingAfter = intent.id;
      // Read as the webhook reads it: `Number` would take '0x1A' or '1e3' for another order.
      const orderId = shopOrderId({ shop_order_id: intent.orderId });
      if (intent.status !== 'requires_capture' || orderId === undefined) continue;
      if (!budget.fits(2 * worstCase.cardEvent(timeoutMs))) {
        outOfTime = true;
        break;
      }
      summary.checked += 1;
      try {
        await asUnit(unitDeadlineMs(timeoutMs), () => settle(intent, orderId));
      } catch (error) {
        const reason = reasonOf(error);
        summary.failed.push({ intentId: intent.id, orderId, reason });
        // A refused capture still leaves the shop a note to act on (report logs the line); a store that did not answer is tried next run.
        if (error instanceof StoreCallbackRefusedError) await report(intent, orderId, reason).catch(() => undefined);
        else log.error('authorization.expiring', { orderId, intentId: intent.id, amount: intent.amountCapturable, currency: intent.currency, why: reason });
      }
    }
    if (outOfTime) break;
    if (!page.hasMore) {
      summary.complete = true;
      break;
    }
  }
  log.info('authorization.summary', { ...summary, failed: summary.failed.length });
  return summary;
}
