/**
 * Which order a card event is about. A payment intent carries it in
 * `metadata.shop_order_id` (set by the service when it created the intent).
 * A charge, refund, dispute, Radar review or early fraud warning only names its payment intent: the order is that
 * intent's `metadata.shop_order_id`, read from the event when the intent came
 * expanded, else retrieved from the provider (one call, traced as
 * `card retrieve payment intent`). Nothing the event says about an order
 * outside the intent is used. No intent, an intent the provider does not know,
 * or one without the metadata: no order (answered as the spec answers a
 * missing order id: 200, nothing changed).
 */
import type { CardEvent, CardEventOf, IntentLink } from '@/lib/card/events';
import { shopOrderId } from '@/lib/card/events';
import type { Services } from '@/lib/services';

function linkedObjectOf(event: CardEventOf<'charge' | 'refund' | 'dispute' | 'review' | 'fraud_warning'>): IntentLink {
  switch (event.kind) {
    case 'charge':
      return event.charge;
    case 'refund':
      return event.refund;
    case 'dispute':
      return event.dispute;
    case 'review':
      return event.review;
    case 'fraud_warning':
      return event.warning;
  }
}

/** The order id the event itself holds, or the intent to retrieve for it. */
export function orderLinkOf(event: CardEvent): { orderId: number | undefined } | { intentId: string } {
  switch (event.kind) {
    case 'payment_intent':
      return { orderId: event.intent.orderId };
    case 'charge':
    case 'refund':
    case 'dispute':
    case 'review':
    case 'fraud_warning': {
      const link = linkedObjectOf(event);
      if (link.orderId !== undefined || link.intentId === undefined) return { orderId: link.orderId };
      return { intentId: link.intentId };
    }
    case 'unreadable':
    case 'other':
      return { orderId: undefined };
  }
}

/** The order id of the event, retrieving its intent from the provider when the event does not hold it. */
export async function orderIdOfEvent(event: CardEvent, services: Services): Promise<number | undefined> {
  const link = orderLinkOf(event);
  if ('orderId' in link) return link.orderId;
  const intent = await (await services.card()).retrievePaymentIntent(link.intentId);
  return intent ? shopOrderId({ shop_order_id: intent.orderId }) : undefined;
}
