/**
 * What one card event handler is: the kind of event it reads, the setting
 * that turns it on (`spec` handlers always run), and the change it makes to
 * the order, given the order id the dispatcher found. Each handled event type
 * is one file exporting one of these and one line in handle-event.ts's map.
 */
import type { CardEventKind, CardEventOf } from '@/lib/card/events';
import type { LifecycleEventSetting } from '@/lib/config';
import type { Services } from '@/lib/services';

export interface CardEventHandler<K extends CardEventKind = CardEventKind> {
  kind: K;
  setting: 'spec' | LifecycleEventSetting;
  apply(orderId: number, event: CardEventOf<K>, services: Services): Promise<string>;
}

export function cardEventHandler<K extends CardEventKind>(handler: CardEventHandler<K>): CardEventHandler<K> {
  return handler;
}
