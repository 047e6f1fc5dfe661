// One card event handler: the event kind it reads, the setting that turns it on, its change to the order.
import type { CardEventKind, CardEventOf } from '@/lib/card/events';
import type { LifecycleEventSetting } from '@/lib/config';
import type { Services } from '@/lib/services';

/** The handler that decides says whether it wrote the order, so no list elsewhere has to know which names did. */
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
  apply(orderId: number, event: CardEventOf<K>, services: Services): Promise<CardOutcome>;
}

export function cardEventHandler<K extends CardEventKind>(handler: CardEventHandler<K>): CardEventHandler<K> {
  return handler;
}
