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

export interface CardEventHandler<K extends CardEventKind = CardEventKind> {
  kind: K;
  /** `manual_capture`: on when STRIPE_CAPTURE is not `automatic` (the intents are created for manual capture). */
  setting: 'spec' | 'manual_capture' | LifecycleEventSetting;
  /** Changes the order, or answers why not: a transition of the payment model (transition.ts) for the payment's facts. */
  apply(orderId: number, event: CardEventOf<K>, services: Services): Promise<CardOutcome>;
}

export function cardEventHandler<K extends CardEventKind>(handler: CardEventHandler<K>): CardEventHandler<K> {
  return handler;
}
