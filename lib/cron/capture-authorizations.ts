/**
 * GET /api/cron/capture-authorizations: held authorizations near their charge's `capture_before`,
 * reported or captured (docs/decisions.md#d36); charges listed, not intents (docs/operations.md#cron-jobs-and-cron_secret).
 */
import { unitDeadlineMs, worstCase, type Budget } from '@/lib/cron/budget';
import { ServiceError, StoreCallbackRefusedError } from '@/lib/errors';
import { log } from '@/lib/log';
import { formatMinorUnits } from '@/lib/money';
import { shopNotes } from '@/lib/orders/notes';
import { shopOrderId } from '@/lib/card/events';
import type { ChargePage } from '@/lib/card/stripe';
import type { Services } from '@/lib/services';
import { withRequestDeadline } from '@/lib/upstream/budget';
import { captureOrderAuthorization } from '@/lib/card-payments/authorization';
import { heldForCapture } from '@/lib/orders/order-payment';
import { addShopNoteOnce } from '@/lib/orders/shop-note';

/** How long an online card authorization lasts (docs.stripe.com/payments/place-a-hold-on-a-payment-method). */
export const AUTHORIZATION_LIFETIME_HOURS = 168;
const PAGE_SIZE = 100;

function reasonOf(error: unknown): string {
  if (error instanceof StoreCallbackRefusedError) return `refused:${typeof error.details?.code === 'string' ? error.details.code : 'order'}`;
  return error instanceof ServiceError ? error.reasonCode : 'unexpected';
}

function dueAuthorizations(page: ChargePage, nowSeconds: number, leadSeconds: number) {
  return page.charges.flatMap((charge) => {
    const intent = charge.intent;
    const held = charge.status === 'succeeded' && !charge.captured && !charge.refunded && intent?.status === 'requires_capture' && intent.chargeId === charge.chargeId;
    // Read as the webhook reads it: `Number` would take '0x1A' or '1e3' for another order.
    const orderId = held ? shopOrderId({ shop_order_id: intent.orderId }) : undefined;
    if (!held || orderId === undefined) return [];
    // Without a deadline from Stripe, the standard 7 days from the authorization.
    const captureBefore = charge.captureBefore ?? charge.created + AUTHORIZATION_LIFETIME_HOURS * 3600;
    if (nowSeconds < captureBefore - leadSeconds) return [];
    const ageHours = Math.floor((nowSeconds - charge.created) / 3600);
    return [{ intentId: intent.id, orderId, amount: intent.amountCapturable, currency: intent.currency, ageHours }];
  });
}

type Held = ReturnType<typeof dueAuthorizations>[number];

export async function captureAuthorizations(
  services: Services,
  budget: Budget,
  now: () => number = Date.now,
) {
  const { action, ageHours } = services.config.authorizationExpiry;
  const timeoutMs = services.config.upstreamTimeoutMs;
  const nowSeconds = Math.floor(now() / 1000);
  const leadSeconds = (AUTHORIZATION_LIFETIME_HOURS - ageHours) * 3600;
  const card = await services.card();
  const failed: { intentId: string; orderId: number; reason: string }[] = [];
  const summary = { action, ageHours, checked: 0, captured: 0, reported: 0, failed, complete: false };

  const report = async (held: Held, why: string) => {
    const { intentId, orderId, amount, currency } = held;
    log.error('authorization.expiring', { orderId, intentId, ageHours: held.ageHours, amount, currency, why });
    const shown = `${formatMinorUnits(amount, currency.toUpperCase())} ${currency.toUpperCase()}`;
    await addShopNoteOnce(services.store(), orderId, shopNotes.authorizationExpiring(intentId, shown, held.ageHours));
    summary.reported += 1;
  };

  const settle = async (held: Held) => {
    if (action === 'report') return report(held, 'setting');
    const outcome = await services.orderLocks.withOrderLock(held.orderId, async () => {
      const order = await services.store().getOrder(held.orderId);
      if (!heldForCapture(order, false)) return 'not_held' as const;
      const captured = await captureOrderAuthorization(order, services, 'expiry-capture', now);
      log.warn('authorization.captured_before_expiry', { orderId: held.orderId, intentId: held.intentId, amount: captured.amount, outcome: captured.outcome });
      return 'captured' as const;
    });
    if (outcome === 'captured') summary.captured += 1;
    // Cancelled, refunded or moved by the shop meanwhile: capturing would charge an order the shop let go.
    else await report(held, 'order_not_waiting');
  };

  let startingAfter: string | undefined;
  pages: for (;;) {
    if (!budget.fits(worstCase.eventPage(timeoutMs))) break;
    const after = startingAfter;
    const page = await withRequestDeadline(worstCase.eventPage(timeoutMs), () =>
      card.listCharges({ createdFrom: nowSeconds - AUTHORIZATION_LIFETIME_HOURS * 3600, limit: PAGE_SIZE, startingAfter: after }),
    );
    startingAfter = page.charges.at(-1)?.chargeId;
    for (const held of dueAuthorizations(page, nowSeconds, leadSeconds)) {
      if (!budget.fits(2 * worstCase.cardEvent(timeoutMs))) break pages;
      summary.checked += 1;
      try {
        await withRequestDeadline(unitDeadlineMs(timeoutMs), () => settle(held));
      } catch (error) {
        const reason = reasonOf(error);
        summary.failed.push({ intentId: held.intentId, orderId: held.orderId, reason });
        // A refused capture still leaves the shop a note to act on (report logs the line); a store that did not answer is tried next run.
        if (error instanceof StoreCallbackRefusedError) await report(held, reason).catch(() => undefined);
        else log.error('authorization.expiring', { orderId: held.orderId, intentId: held.intentId, amount: held.amount, currency: held.currency, why: reason });
      }
    }
    if (!page.hasMore || startingAfter === undefined) {
      summary.complete = true;
      break;
    }
  }
  log.info('authorization.summary', { ...summary, failed: summary.failed.length });
  return summary;
}
