/**
 * Which order a card event is about. A payment intent carries it in
 * `metadata.shop_order_id` (set by the service when it created the intent).
 * A charge, refund or dispute only names its payment intent: the order is that
 * intent's `metadata.shop_order_id`, read from the event when the intent came
 * expanded, else retrieved from the provider (one call, traced as
 * `card retrieve payment intent`). Nothing the event says about an order
 * outside the intent is used. No intent, an intent the provider does not know,
 * or one without the metadata: no order (answered as the spec answers a
 * missing order id: 200, nothing changed).
 */
import type { CardEvent } from '@/lib/card/events';
import { shopOrderId } from '@/lib/card/events';
import type { Services } from '@/lib/services';

export async function orderIdOfEvent(event: CardEvent, services: Services): Promise<number | undefined> {
  switch (event.kind) {
    case 'payment_intent':
      return event.intent.orderId;
    case 'charge':
    case 'refund':
    case 'dispute': {
      const link = event.kind === 'charge' ? event.charge : event.kind === 'refund' ? event.refund : event.dispute;
      if (link.orderId !== undefined) return link.orderId;
      if (link.intentId === undefined) return undefined;
      const intent = await (await services.card()).retrievePaymentIntent(link.intentId);
      return intent ? shopOrderId({ shop_order_id: intent.orderId }) : undefined;
    }
    case 'unreadable':
    case 'other':
      return undefined;
  }
}
