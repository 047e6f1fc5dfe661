// Which order a card event is about: the payment intent's `metadata.shop_order_id`, from the event or retrieved
// (docs/integrations/stripe.md#after-the-payment-refunds-disputes-delayed-methods); nothing else the event says is used.
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

export async function orderIdOfEvent(event: CardEvent, services: Services): Promise<number | undefined> {
  const link = orderLinkOf(event);
  if ('orderId' in link) return link.orderId;
  const intent = await (await services.card()).retrievePaymentIntent(link.intentId);
  return intent ? shopOrderId({ shop_order_id: intent.orderId }) : undefined;
}
