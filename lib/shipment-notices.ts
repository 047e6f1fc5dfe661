/** Shipping facts as the service records them: below the ShipStation clients and the replay queue, which both name them. */

export interface ShipmentNotice {
  orderNumber: string | undefined;
  trackingNumber: string | undefined;
  carrier: string | undefined;
  shipDate: string | undefined;
  /** One order may ship in several packages. */
  shipmentId?: string | undefined;
  voided?: boolean | undefined;
  /** V2 only, until read: the shipment whose `shipment_number` is the order number (ShipStationV2Client.withOrderNumber). */
  orderShipmentId?: string | undefined;
}

export interface DeliveryNotice {
  orderNumber: string | undefined;
  trackingNumber: string | undefined;
  /** ShipStation's `actual_delivery_date`, else when the event arrived. */
  deliveredAt: string;
}
