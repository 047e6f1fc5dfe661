/**
 * The payment model's transition table (lib/orders/payment-state.ts) in words, as docs/contract.md#payment-life shows it:
 * kept beside the model's tests, not in lib/, because the service never reads it (tests/unit/payment-state.test.ts holds the two as one).
 */
const PAYMENT_TRANSITIONS = [
  {
    event: '`payment_intent.payment_failed`',
    fact: 'a failed attempt',
    applies: 'order `pending`, or a debit of that intent on its way (whatever status the shop set since: a private note says the order is not paid); newer than the newest attempt fact (older: stale; while a debit is on its way, Stripe\'s intent as it is now decides)',
    once: 'its charge (or event) within its second',
    holds: 'ends `delayed`',
    status: '`pending`, with the failure note',
  },
  {
    event: '`payment_intent.processing`',
    fact: 'a delayed payment on its way',
    applies: 'not paid; order `pending` or already held (a review may come first); newer than the newest attempt fact',
    once: 'its charge within its second',
    holds: 'sets `delayed`',
    status: '`on-hold`',
  },
  {
    event: '`payment_intent.amount_capturable_updated`',
    fact: 'an authorization, with its `capture_before`',
    applies: 'not paid; on an order that can no longer be paid (`cancelled`, `failed`, `refunded`) it is released at Stripe at once, and an intent cancelled before it arrived makes it released',
    once: 'intent and charge',
    holds: 'sets `capture` (none when released)',
    status: '`authorized` (on_shipment, nothing else holding) or `on-hold`; a cancelled order stays cancelled',
  },
  {
    event: '`payment_intent.succeeded`, amount matches',
    fact: 'the payment',
    applies: 'not paid by this intent; recorded whatever status the order has when the facts awaited it (an authorization, a debit); any other payment on a paid order logs `card.duplicate_payment`',
    once: 'intent',
    holds: 'ends `capture`, `delayed`, `mismatch`',
    status: '`processing`; a shipped order keeps its status; `on-hold` while another hold is active',
  },
  {
    event: '`payment_intent.succeeded`, amount differs',
    fact: 'an amount mismatch',
    applies: 'not paid',
    once: 'intent and charge',
    holds: 'sets `mismatch`',
    status: '`on-hold`',
  },
  {
    event: '`payment_intent.canceled`',
    fact: 'the authorization released (lapsed when Stripe cancelled it itself)',
    applies: 'an intent the order\'s facts or checkout name, not paid; recorded whatever the order shows, before its authorization too',
    once: 'intent',
    holds: 'ends `capture`',
    status: '`failed` (unpaid, and no longer payable with it) when nothing else holds it; a private note either way',
  },
  {
    event: '`review.opened`',
    fact: 'a Radar review, open',
    applies: 'any time, before or after the payment it is about',
    once: 'review id',
    holds: 'sets `review`',
    status: '`on-hold`',
  },
  {
    event: '`review.closed`',
    fact: 'the review, closed',
    applies: 'any time; an opening delivered after it is stale',
    once: 'review id',
    holds: 'ends `review`; closed for a refund (`refunded`, `refunded_as_fraud`), it holds until the shop moves the order on',
    status: 'where the other holds and the payment put it',
  },
  {
    event: '`charge.dispute.created`',
    fact: 'a dispute, open',
    applies: 'any time, the payment captured at shipping included',
    once: 'dispute id',
    holds: 'sets `dispute`',
    status: '`on-hold`',
  },
  {
    event: '`charge.dispute.closed`',
    fact: 'the dispute, closed',
    applies: 'any time; closed statuses are final',
    once: 'dispute id',
    holds: 'ends `dispute`',
    status: '`lost`: `failed`; otherwise where the other holds and the payment put it',
  },
  {
    event: 'the shop moves a held order out of its hold status',
    fact: 'the shop\'s answer',
    applies: 'seen with the next event',
    once: '-',
    holds: 'ends `mismatch` and closed reviews\' holds; a failed order set back to `pending` forgets its ended authorization',
    status: 'the shop\'s status becomes where later holds return',
  },
];

export function paymentTransitionsMarkdown(): string {
  const head = '| Event | Fact | Applies when | Once by | Holds | Status |\n|---|---|---|---|---|---|';
  const rows = PAYMENT_TRANSITIONS.map((r) => `| ${r.event} | ${r.fact} | ${r.applies} | ${r.once} | ${r.holds} | ${r.status} |`);
  return [head, ...rows].join('\n');
}
