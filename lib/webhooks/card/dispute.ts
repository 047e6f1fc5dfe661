/**
 * What the dispute handlers share (CARD_LIFECYCLE_EVENTS=disputes): how an
 * amount reads in a note. One file per event type: dispute-created.ts,
 * dispute-closed.ts, dispute-funds.ts.
 */
import type { DisputeFacts } from '@/lib/card/events';
import { formatMinorUnits } from '@/lib/money';

export function disputeAmount(dispute: DisputeFacts): string {
  return `${formatMinorUnits(dispute.amount, dispute.currency)} ${dispute.currency.toUpperCase()}`;
}
