import type { DisputeFacts } from '@/lib/card/events';
import { formatMinorUnits } from '@/lib/money';

export function disputeAmount(dispute: DisputeFacts): string {
  return `${formatMinorUnits(dispute.amount, dispute.currency)} ${dispute.currency.toUpperCase()}`;
}
