/** Customer notes the service writes on orders, in one place so their wording is tested once. */
import { HOLD_STATUSES } from '@/lib/order-statuses';

const MANUAL_PAYMENT_AWAITED_START = 'Your order has been submitted and is awaiting manual payment';
const PAYMENT_FAILED_START = 'Your payment could not be completed:';

export const PAYMENT_PROCESSING_NOTE =
  'We have received your payment details and your payment is being processed. This can take a few business days; we will confirm your order once it has arrived.';

const PAYMENT_AUTHORIZED_START = 'Your card payment has been authorized. The amount is reserved on your card';

export function paymentAuthorizedNote(capture: 'automatic' | 'on_shipment' | 'manual' | undefined): string {
  const when = capture === 'on_shipment' ? 'when your order ships' : 'once we have confirmed your order';
  return `${PAYMENT_AUTHORIZED_START} and will be charged ${when}.`;
}

export function manualPaymentAwaitedNote(methodTitle: string): string {
  return `${MANUAL_PAYMENT_AWAITED_START} (${methodTitle}). Please send us a screenshot of your payment; we will confirm your order once the payment is verified.`;
}

/** Replaces a failure or manual-payment note once a card payment succeeded (docs/decisions.md#d13). */
export const PAYMENT_RECEIVED_NOTE = 'We have received your payment. Thank you for your order!';

/** Recognised by its wording, so a note the customer typed at checkout is never replaced. */
export function isSupersededByPayment(note: string): boolean {
  return note.startsWith(PAYMENT_FAILED_START) || note.startsWith(MANUAL_PAYMENT_AWAITED_START) || note === PAYMENT_PROCESSING_NOTE || note.startsWith(PAYMENT_AUTHORIZED_START);
}

export const SHIPPED_START = 'Your order has been shipped!';
export const ANOTHER_PACKAGE_START = 'Another package of your order has been shipped!';

export function isServiceMessage(note: string): boolean {
  const exact = note === PAYMENT_RECEIVED_NOTE || note === AMOUNT_MISMATCH_NOTE;
  return exact || isSupersededByPayment(note) || note.startsWith(SHIPPED_START) || note.startsWith(ANOTHER_PACKAGE_START);
}

export const customerNoteKeptNote = (customerNote: string) =>
  `Customer's note at checkout (the customer note field now holds the checkout service's message): ${customerNote}`;

export const AMOUNT_MISMATCH_NOTE =
  'We received your payment, but the amount paid does not match your order total, so your order has been placed on hold. Please contact support so we can resolve it.';

export function paymentFailedNote(errorMessage: string, cartRestored: boolean): string {
  const next = cartRestored
    ? 'Your cart has been restored so you can try again.'
    : 'Please try again or use another payment method.';
  // Provider messages usually end with their own full stop ("Your card was declined.").
  const reason = /[.!?]$/.test(errorMessage) ? errorMessage : `${errorMessage}.`;
  return `${PAYMENT_FAILED_START} ${reason} ${next}`;
}

/** docs/contract.md#spec-4-4: "Your order has been shipped!" then the present parts joined with " | ". */
export function shippedNote(details: Partial<Record<'trackingNumber' | 'carrier' | 'shipDate', string>>): string {
  const parts = [
    details.trackingNumber ? `Tracking Number: ${details.trackingNumber}` : undefined,
    details.carrier ? `Carrier: ${details.carrier}` : undefined,
    details.shipDate ? `Ship Date: ${details.shipDate}` : undefined,
  ].filter((part): part is string => part !== undefined);
  return parts.length === 0 ? SHIPPED_START : `${SHIPPED_START} ${parts.join(' | ')}`;
}

const HOLD_NAMES: Record<string, string> = { review: 'a Radar review', dispute: 'a dispute', capture: 'the card authorization', mismatch: 'the amount mismatch', delayed: 'the payment on its way' };
export const holdName = (hold: string) => HOLD_NAMES[hold] ?? hold;

export const shopNotes = {
  debitFailed: (intentId: string, status: string) =>
    `The delayed payment ${intentId} failed at Stripe: the order is not paid, though it is ${status}. Ask the customer to pay again before shipping it.`,
  chargeRounded: (charged: string, total: string, currency: string) =>
    `Stripe charged ${charged} ${currency} for this order's total of ${total} ${currency}: Stripe moves ${currency} in steps of 0.010. A full refund returns the ${charged} charged.`,
  shipmentDelivered: (trackingNumber: string | undefined, deliveredAt: string) =>
    `ShipStation tracking reports the package${trackingNumber ? ` with tracking number ${trackingNumber}` : ''} delivered (${deliveredAt}).`,
  shipmentVoided: (shipment: string, trackingNumber: string | undefined) =>
    `ShipStation voided a shipment${shipment ? ` (${shipment})` : ''}${trackingNumber ? ` (tracking number ${trackingNumber})` : ''}: its label was cancelled, nothing was shipped with it.`,
  authorizationExpiring: (intentId: string, amount: string, hours: number) =>
    `The card authorization ${intentId} (${amount}) is ${hours} hours old and lapses 7 days after it was made: capture it (order action "Capture charge") or cancel the order, or the customer's card is never charged.`,
  refundRemoved: (refundId: string, status: string) =>
    `Stripe refund ${refundId} is ${status}: the refund recorded for it was removed. The money was not returned to the customer.`,
  disputeOpened: (disputeId: string, reason: string, amount: string, statusSentence: string) =>
    `Stripe dispute ${disputeId} opened (reason: ${reason}, amount: ${amount}). ${statusSentence} Respond to the dispute in the Stripe dashboard.`,
  disputeWon: (disputeId: string, status: string, statusSentence: string) => `Stripe dispute ${disputeId} closed (${status}). ${statusSentence}`,
  disputeLost: (disputeId: string) => `Stripe dispute ${disputeId} was lost: the payment was returned to the cardholder. The order was marked failed.`,
  reviewOpened: (reviewId: string, reason: string, statusSentence: string) =>
    `Stripe Radar review ${reviewId} opened (reason: ${reason}). ${statusSentence} Approve or refund the payment in the Stripe dashboard before shipping.`,
  reviewApproved: (reviewId: string, statusSentence: string) => `Stripe Radar review ${reviewId} approved. ${statusSentence}`,
  statusSentence: (before: string, after: string, stillHeldBy: string[]) => {
    if (after !== before) return HOLD_STATUSES.has(after) ? `The order was put on hold (it was ${before}).` : `The order is back to ${after}.`;
    if (stillHeldBy.length > 0 && HOLD_STATUSES.has(after)) return `The order stays on hold: ${stillHeldBy.join(' and ')} still ${stillHeldBy.length > 1 ? 'hold' : 'holds'} it.`;
    return `The order stays ${after}.`;
  },
  reviewClosed: (reviewId: string, reason: string, statusSentence: string) =>
    `Stripe Radar review ${reviewId} closed (${reason}). ${statusSentence} A refund or dispute is recorded by its own event.`,
  earlyFraudWarning: (warningId: string, chargeId: string, fraudType: string, actionable: boolean) =>
    actionable
      ? `Stripe early fraud warning ${warningId}: the card issuer reports charge ${chargeId} as likely fraud (${fraudType}). Stripe recommends refunding it before a dispute arrives: a refunded charge cannot be disputed, and a dispute costs a fee. Do not ship the order until you have decided.`
      : `Stripe early fraud warning ${warningId}: the card issuer reports charge ${chargeId} as likely fraud (${fraudType}). It is already disputed or fully refunded: nothing more to do for it.`,
  disputeFunds: (disputeId: string, movement: 'withdrawn' | 'reinstated', amount: string) =>
    movement === 'withdrawn'
      ? `Stripe withdrew ${amount} from the balance for dispute ${disputeId}.`
      : `Stripe reinstated ${amount} to the balance for dispute ${disputeId}.`,
};
