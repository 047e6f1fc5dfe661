// One shipment applied once to its order, under the order's lock (docs/contract.md#spec-4-4); later packages and two
// instances without a shared lock: docs/integrations/shipstation.md#packages-and-two-instances-without-a-shared-lock.
// STRIPE_CAPTURE=on_shipment captures first, under the same lock (docs/decisions.md#d36); a failed capture queues the shipment.
import { captureOrderAuthorization } from '@/lib/card-payments/authorization';
import { CardProviderError, OrderBusyError, StoreCallbackRefusedError, StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import { sendCustomerMessage } from '@/lib/orders/customer-message';
import { buildOrderUpdate, keptCustomerNote } from '@/lib/orders/mutation';
import { ANOTHER_PACKAGE_START, shippedNote, SHIPPED_START, shopNotes } from '@/lib/orders/notes';
import { parseOrderId } from '@/lib/order-id';
import { ORDER_STATUS } from '@/lib/order-statuses';
import { addShopNoteOnce } from '@/lib/orders/shop-note';
import { awaitsCapturedPayment, heldForCapture } from '@/lib/orders/order-payment';
import { readShipStation, retryableStore } from '@/lib/shipments/failures';
import { entryOf, holdsPackage, packageKey, packageMerge, packagesMeta, packagesOf, trackingItemsMeta, type PackageEntry } from '@/lib/shipments/packages';
import type { Services } from '@/lib/services';
import type { ShipmentNotice } from '@/lib/shipment-notices';
import { META } from '@/lib/orders/meta-keys';
import type { ShipmentPackageMerge, ShipmentPackageMerged, StoreOrder } from '@/lib/store/types';
import type { LockPeek } from '@/lib/shared-state/order-locks';
import { customerSafeNotice } from '@/lib/shipments/note-details';
import type { ShippedStatusReading } from '@/lib/shared-state/shipped-status';

export const SHIPPABLE_STATUSES: ReadonlySet<string> = new Set([ORDER_STATUS.processing, ORDER_STATUS.awaitingShipment]);

/** Outcomes that wrote the shipment on its order: what the replay and reconciliation count as applied. */
export type AppliedShipOutcome = 'shipped' | 'completed_fallback' | 'package_added';

/** A voided one's note is not the shipment. */
export type UnappliedShipOutcome =
  | 'bad_order_number'
  | 'order_fetch_failed'
  | 'already_shipped'
  | 'ignored_status'
  | 'update_failed'
  | 'order_busy'
  | 'capture_failed'
  | 'voided_noted'
  | 'packages_unreadable'
  | 'resource_read_failed'
  | 'no_time';

/** Shipped already: `shipped`, or the fallback `completed` where the store has no `shipped`. */
export const SHIPPED_STATUSES: ReadonlySet<string> = new Set([ORDER_STATUS.shipped, ORDER_STATUS.completed]);

type LockedResult =
  | { outcome: AppliedShipOutcome; applied: true; retryableFailure?: undefined }
  | { outcome: UnappliedShipOutcome; applied?: false; retryableFailure?: string };

export type ShipResult = { orderId: number | undefined } & LockedResult;

/** The shipment numbers one batch has read already, so each shipment is read once for the batch. */
type OrderNumbers = Map<string, string | undefined>;

/** Some store integrations pad ShipStation's orderNumber with zeros: `0042` is order 42. */
export function parseOrderNumber(value: unknown): number | undefined {
  return parseOrderId(value, 'zero_padded');
}

export async function markOrderShipped(listed: ShipmentNotice, services: Services, numbers?: OrderNumbers): Promise<ShipResult> {
  const received = await withOrderNumber(listed, services, numbers);
  if ('failed' in received) return received.failed;
  const orderId = parseOrderNumber(received.orderNumber);
  if (orderId === undefined) return { orderId, outcome: 'bad_order_number' };
  const { notice, refused } = customerSafeNotice(received);
  // Field names, reasons and lengths only: a refused value may be exactly the text someone wanted shown.
  for (const { field, reason, length } of refused) log.warn('shipping.detail_refused', { orderId, field, reason, length });

  try {
    // With Redis, the lock's own round trip reads the store's `shipped` status memory (its peek).
    const reading = services.shippedStatus.reading();
    const lock = lockSharing(reading.peek);
    const result = await services.orderLocks.withOrderLock(orderId, () => shipLocked(orderId, notice, services, reading, lock.shared()), lock.peek);
    return { orderId, ...result };
  } catch (error) {
    if (error instanceof OrderBusyError) return { orderId, outcome: 'order_busy', retryableFailure: 'order_busy' };
    throw error;
  }
}

/** A V2 label read lazily names its order's shipment only: read here, one notice at a time, so a batch keeps what it applied. */
async function withOrderNumber(
  notice: ShipmentNotice,
  services: Services,
  numbers: OrderNumbers | undefined,
): Promise<ShipmentNotice | { failed: ShipResult }> {
  const shipmentId = notice.orderShipmentId;
  const client = services.shipStationV2;
  if (shipmentId === undefined || notice.orderNumber !== undefined) return notice;
  if (!client) return { failed: { orderId: undefined, outcome: 'resource_read_failed', retryableFailure: 'shipstation:not_configured' } };
  if (numbers?.has(shipmentId)) return client.withOrderNumber({ ...notice, orderNumber: numbers.get(shipmentId) });
  const read = await readShipStation(() => client.withOrderNumber(notice));
  if (!('value' in read)) return { failed: { orderId: undefined, ...read } };
  numbers?.set(shipmentId, read.value.orderNumber);
  return read.value;
}

/** Only a lock taken in Redis answers the peek; without Redis there is one instance (docs/operations.md). */
function lockSharing(peek: LockPeek | undefined): { peek: LockPeek | undefined; shared: () => boolean } {
  if (!peek) return { peek, shared: () => true };
  let answered = false;
  const found = (present: boolean) => {
    answered = true;
    peek.found(present);
  };
  return { peek: { key: peek.key, found }, shared: () => answered };
}

async function shipLocked(
  orderId: number,
  notice: ShipmentNotice,
  services: Services,
  reading: ShippedStatusReading,
  lockShared: boolean,
): Promise<LockedResult> {
  const store = services.store();
  // Answered by the lock's peek when it carried one; otherwise read beside the order, not after it.
  const statusToWrite = reading.statusToWrite();
  statusToWrite.catch(() => undefined);
  let order: StoreOrder;
  try {
    order = await store.getOrder(orderId);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    log.warn('shipping.order_fetch_failed', { orderId, failure: error.failure, status: error.status, code: error.code });
    return { outcome: 'order_fetch_failed', ...retryableStore(error) };
  }
  const key = packageKey(notice);
  const packages = packagesOf(order);
  try {
    if (notice.voided) {
      if (key !== undefined && packages === undefined) return packagesUnreadable(orderId);
      return await noteVoided(orderId, order, notice, key, packages ?? [], services);
    }
    if (SHIPPED_STATUSES.has(order.status)) {
      if (key !== undefined && notice.trackingNumber && packages === undefined) return packagesUnreadable(orderId);
      // A package with nothing to track adds nothing. An order shipped with no package recorded (shipped
      // by hand in the admin) is left alone, as the spec says: this shipment may well be that one.
      if (key === undefined || !notice.trackingNumber || !packages || packages.length === 0 || holdsPackage(packages, notice, key)) {
        return alreadyShipped(orderId, order.status);
      }
      return await addPackage(orderId, order, notice, key, packages, services);
    }
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    return updateFailed(orderId, error);
  }
  const onShipment = services.config.capture === 'on_shipment';
  if (!SHIPPABLE_STATUSES.has(order.status) && !(onShipment && heldForCapture(order))) {
    log.info('shipping.order_not_shippable', { orderId, orderStatus: order.status });
    return { outcome: 'ignored_status' };
  }
  if (onShipment && awaitsCapturedPayment(order)) {
    const failure = await captureBeforeShipping(orderId, order, services);
    if (failure) return { outcome: 'capture_failed', retryableFailure: failure };
  }

  const now = new Date().toISOString();
  const trackingMeta = services.config.shipmentTrackingMeta;
  const tracked = trackingItemsMeta(order, notice.trackingNumber ? [entryOf(notice, key ?? '', now)] : [], trackingMeta);
  let message: { customerNote?: string };
  try {
    message = await sendCustomerMessage(store, order, { customerNote: shippedNote(notice) }, services.config.customerMessages);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    return updateFailed(orderId, error);
  }
  const change = {
    ...message,
    meta: {
      [META.trackingNumber]: notice.trackingNumber ?? '',
      [META.shippingCarrier]: notice.carrier ?? '',
      [META.shippedDate]: notice.shipDate ?? now,
      [META.shipstationWebhookReceivedAt]: now,
    },
    metaMode: 'append' as const,
    ...(Object.keys(tracked).length > 0 && notice.trackingNumber ? { metaValues: tracked } : {}),
  };

  // Redis down: another instance may be shipping this order now, so the store ships it only if it is
  // still in the status read (the companion plugin's merge); else, or without the plugin, the spec's write.
  const write = async (status: string): Promise<LockedResult | StoreError> => {
    const merged = lockShared || key === undefined ? undefined : await shipThroughPlugin(orderId, order, notice, key, { ...change, status }, services);
    if (merged !== undefined) return merged;
    try {
      await store.updateOrder(orderId, buildOrderUpdate(order, { ...change, status }));
      return { outcome: shippedAs(status), applied: true };
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      return refusedWrite(orderId, status, error);
    }
  };
  const written = await write(await statusToWrite);
  if (!(written instanceof StoreError)) return written;

  // No `shipped` status (docs/decisions.md#d27). WordPress validates before changing anything, so the
  // refused write left the order as fetched: the `completed` update is built from the same snapshot.
  await services.shippedStatus.rememberShippedMissing();
  log.warn('shipping.status_fallback', { orderId, from: ORDER_STATUS.shipped, to: ORDER_STATUS.completed });
  const fallback = await write(ORDER_STATUS.completed);
  return fallback instanceof StoreError ? updateFailed(orderId, fallback) : fallback;
}

/** STRIPE_CAPTURE=on_shipment, under the shipment's lock: undefined when captured (now or before), else the replay queue's reason. */
async function captureBeforeShipping(orderId: number, order: StoreOrder, services: Services): Promise<string | undefined> {
  try {
    const captured = await captureOrderAuthorization(order, services, 'ship-capture');
    log.info('shipping.captured', { orderId, intentId: captured.intentId, amount: captured.amount, authorized: captured.authorized, outcome: captured.outcome });
    return undefined;
  } catch (error) {
    if (error instanceof StoreCallbackRefusedError) {
      const code = typeof error.details?.code === 'string' ? error.details.code : 'refused';
      // The shop must act (an expired authorization, a total above it): the reason is in words here.
      log.error('shipping.capture_refused', { orderId, code, reason: error.message });
      return `capture:${code}`;
    }
    if (error instanceof CardProviderError) {
      log.warn('shipping.capture_failed', { orderId, type: error.type, status: error.status });
      return `capture:${error.type}`;
    }
    throw error;
  }
}

const shippedAs = (status: string): AppliedShipOutcome => (status === ORDER_STATUS.shipped ? 'shipped' : 'completed_fallback');

/** Undefined when the store has no merge route; the unknown-status refusal is handed back. */
async function shipThroughPlugin(
  orderId: number,
  order: StoreOrder,
  notice: ShipmentNotice,
  key: string,
  change: { status: string; customerNote?: string; meta: Record<string, string> },
  services: Services,
): Promise<LockedResult | StoreError | undefined> {
  const entry = entryOf(notice, key, change.meta[META.shippedDate] ?? new Date().toISOString());
  // The plugin writes `customer_note` as given: the customer's own note when the message went as an order note.
  const customerNote = change.customerNote ?? order.customer_note;
  const kept = change.customerNote === undefined ? {} : keptCustomerNote(order, change.customerNote);
  const merge: ShipmentPackageMerge = {
    // Shipped meanwhile by another delivery, this becomes a later package: its line only where messages go in customer_note.
    ...packageMerge(entry, change.customerNote === undefined ? undefined : anotherPackageLine(notice), services.config.shipmentTrackingMeta),
    ship: { from: order.status, status: change.status, customer_note: customerNote, meta: { ...change.meta, ...kept } },
  };
  let answer: ShipmentPackageMerged | undefined;
  try {
    answer = await mergePackage(orderId, merge, services);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    return refusedWrite(orderId, change.status, error);
  }
  if (answer === undefined) return undefined;
  if (answer.shipped) return { outcome: shippedAs(change.status), applied: true };
  if (answer.added) return packageAdded(orderId);
  if (SHIPPED_STATUSES.has(answer.status)) return alreadyShipped(orderId, answer.status);
  log.info('shipping.order_not_shippable', { orderId, orderStatus: answer.status });
  return { outcome: 'ignored_status' };
}

/** Another delivery shipped it, or this shipment's own earlier write landed with its answer lost. */
function alreadyShipped(orderId: number, orderStatus: string): LockedResult {
  log.info('shipping.already_shipped', { orderId, orderStatus });
  return { outcome: 'already_shipped' };
}

function packageAdded(orderId: number, packages?: number): LockedResult {
  log.info('shipping.package_added', packages === undefined ? { orderId } : { orderId, packages });
  return { outcome: 'package_added', applied: true };
}

function anotherPackageLine(notice: ShipmentNotice): string {
  return shippedNote(notice).replace(SHIPPED_START, ANOTHER_PACKAGE_START);
}

function packagesUnreadable(orderId: number): LockedResult {
  log.error('shipping.packages_unreadable', { orderId });
  return { outcome: 'packages_unreadable', retryableFailure: 'packages_unreadable' };
}

async function mergePackage(orderId: number, merge: ShipmentPackageMerge, services: Services): Promise<ShipmentPackageMerged | undefined> {
  try {
    return await services.store().mergeShipmentPackage(orderId, merge);
  } catch (error) {
    if (error instanceof StoreError && error.status === 404 && error.code === 'rest_no_route') {
      log.warn('shipping.packages_without_plugin', { orderId });
      return undefined;
    }
    throw error;
  }
}

/** A `shipped` write refused as an unknown status is handed back for the fallback. */
function refusedWrite(orderId: number, status: string, error: StoreError): LockedResult | StoreError {
  const unknownStatus = error.failure === 'invalid_param' && error.code === 'rest_invalid_param';
  return status === ORDER_STATUS.shipped && unknownStatus ? error : updateFailed(orderId, error);
}

function updateFailed(orderId: number, error: StoreError): LockedResult {
  // The list was edited into something unreadable since this delivery read it (the plugin refused the merge).
  if (error.code === 'checkout_bridge_packages_unreadable') return packagesUnreadable(orderId);
  log.warn('shipping.order_update_failed', { orderId, failure: error.failure, status: error.status, code: error.code });
  return { outcome: 'update_failed', ...retryableStore(error) };
}

async function addPackage(
  orderId: number,
  order: StoreOrder,
  notice: ShipmentNotice,
  key: string,
  packages: PackageEntry[],
  services: Services,
): Promise<LockedResult> {
  const entry = entryOf(notice, key, new Date().toISOString());
  const message = await sendCustomerMessage(services.store(), order, { customerNoteLine: anotherPackageLine(notice) }, services.config.customerMessages);
  const merged = await mergePackage(orderId, packageMerge(entry, message.customerNoteLine, services.config.shipmentTrackingMeta), services);
  // Not added: another delivery added it meanwhile (on another instance), or this one's earlier answer was lost.
  if (merged) return merged.added ? packageAdded(orderId) : alreadyShipped(orderId, order.status);
  const listed = [...packages, entry];
  const metaValues = packagesMeta(order, listed, services.config.shipmentTrackingMeta);
  await services.store().updateOrder(orderId, buildOrderUpdate(order, { ...message, metaValues }));
  return packageAdded(orderId, listed.length);
}

async function noteVoided(
  orderId: number,
  order: StoreOrder,
  notice: ShipmentNotice,
  key: string | undefined,
  packages: PackageEntry[],
  services: Services,
): Promise<LockedResult> {
  if (key !== undefined && packages.some((entry) => entry.key === key && entry.voided)) return { outcome: 'voided_noted' };
  const name = notice.shipmentId ?? '';
  await addShopNoteOnce(services.store(), orderId, shopNotes.shipmentVoided(name, notice.trackingNumber));
  if (key !== undefined) {
    const trackingMeta = services.config.shipmentTrackingMeta;
    const listedEntry = packages.find((entry) => entry.key === key);
    const voided: PackageEntry = { ...(listedEntry ?? entryOf(notice, key, new Date().toISOString())), voided: true };
    const merged = await mergePackage(orderId, packageMerge(voided, undefined, trackingMeta), services);
    if (!merged) {
      const listed: PackageEntry[] = listedEntry
        ? packages.map((entry) => (entry.key === key ? { ...entry, voided: true } : entry))
        : [...packages, voided];
      await services.store().updateOrder(orderId, buildOrderUpdate(order, { metaValues: packagesMeta(order, listed, trackingMeta) }));
    }
  }
  log.info('shipping.shipment_voided', { orderId, orderStatus: order.status });
  return { outcome: 'voided_noted' };
}
