/**
 * Shipping facts as the service records them, named by the ShipStation clients, the replay
 * queue and the shipping use cases alike: here, below all of them, so none imports another's folder.
 */

/** One shipment as the webhook use case needs it, whether it came inline or from ShipStation. */
export interface ShipmentNotice {
  orderNumber: string | undefined;
  trackingNumber: string | undefined;
  carrier: string | undefined;
  shipDate: string | undefined;
  /** ShipStation's id of this package, when the sender names it: one order may ship in several. */
  shipmentId?: string | undefined;
  /** The label was voided: noted on the order, never shipped. */
  voided?: boolean | undefined;
  /** V2 only, until read: the shipment whose `shipment_number` is the order number (ShipStationV2Client.withOrderNumber). */
  orderShipmentId?: string | undefined;
}

/** A delivery V2 tracking reported (TRACK_EVENT_V2 `DE`), as the service records it. */
export interface DeliveryNotice {
  orderNumber: string | undefined;
  trackingNumber: string | undefined;
  /** ShipStation's `actual_delivery_date`, else when the event arrived. */
  deliveredAt: string;
}
