/**
 * What one card event handler is: the kind of event it reads, the setting
 * that turns it on (`spec` handlers always run), and the change it makes to
 * the order, given the order id the dispatcher found. Each handled event type
 * is one file exporting one of these and one line in handle-event.ts's map.
 */
import type { CardEventKind, CardEventOf } from '@/lib/card/events';
import type { LifecycleEventSetting } from '@/lib/config';
import type { Services } from '@/lib/services';

/**
 * What applying an event did: its name (the request's log line, reconciliation's warning) and
 * whether it wrote the order. The handler that decides says both, so no list elsewhere has to know
 * which names leave the order as it was; payment reconciliation counts an event as applied from it.
 */
export interface Changed<Name extends string> {
  readonly name: Name;
  readonly changedOrder: true;
}
export interface Unchanged<Name extends string> {
  readonly name: Name;
  readonly changedOrder: false;
}
export type CardOutcome = Changed<string> | Unchanged<string>;

export function changed<Name extends string>(name: Name): Changed<Name> {
  return { name, changedOrder: true };
}

export function unchanged<Name extends string>(name: Name): Unchanged<Name> {
  return { name, changedOrder: false };
}

/** How an event is applied, beyond the event itself. */
export interface ApplyOptions {
  /**
   * Payment reconciliation sets this for an event created before this instance's memory of applied
   * events began (no REDIS_URL, and the process restarted since): an order written before receipts
   * existed cannot say whether such an event was applied (payment-failed.ts).
   */
  olderThanMemory?: boolean;
}

export interface CardEventHandler<K extends CardEventKind = CardEventKind> {
  kind: K;
  /** `manual_capture`: on when STRIPE_CAPTURE is not `automatic` (the intents are created for manual capture). */
  setting: 'spec' | 'manual_capture' | LifecycleEventSetting;
  /**
   * Changes the order, or answers why not. A handler that writes the order checks the order it
   * has just read for the event's receipt (lib/orders/receipts.ts), answers `duplicate_event`
   * (unchanged) when it is there, and writes the receipt with its change.
   */
  apply(orderId: number, event: CardEventOf<K>, services: Services, options: ApplyOptions): Promise<CardOutcome>;
}

export function cardEventHandler<K extends CardEventKind>(handler: CardEventHandler<K>): CardEventHandler<K> {
  return handler;
}
