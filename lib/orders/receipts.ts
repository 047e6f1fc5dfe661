/**
 * Receipts on the order (docs/decisions.md#d12): the ids of the card events applied to
 * an order, kept in its meta under `_cardprovider_event_ids`, written in the
 * same store update as each event's change. The order is the one durable
 * record of what happened to it, so the proof that an event was applied
 * cannot be lost apart from the change itself: a Redis outage or flush, or an
 * answer lost after the store committed the write, leaves the receipt where
 * the next delivery reads it.
 *
 * One key, its value a JSON array of ids, oldest first, rather than one entry
 * per event: WooCommerce keeps one entry per key when entries come without an
 * id (an "appended" entry replaces the one with its key), and one key per
 * event would add a meta row per event to the order. A JSON array survives any
 * character an id may hold. It keeps the newest RECEIPTS_KEPT ids: an order
 * sees a handful of card events (a payment attempt, a refund, a dispute step
 * each), so the cap only bounds what a flood of declined cards on one order
 * could make WooCommerce load with every read of it (100 ids, about 3 KB).
 */
import { META } from '@/lib/orders/meta-keys';
import { metaValue } from '@/lib/orders/normalize';
import type { StoreOrder } from '@/lib/store/types';

export const RECEIPTS_KEPT = 100;

/** The ids of the events applied to the order, oldest first; none when the key is absent or unreadable. */
export function appliedEventIds(order: StoreOrder): string[] {
  const raw = metaValue(order, META.cardEventIds);
  if (raw === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether the order holds the receipt of this event: it was applied, whatever Redis remembers. */
export function hasReceipt(order: StoreOrder, eventId: string): boolean {
  return appliedEventIds(order).includes(eventId);
}

/** Whether the order holds any receipt: a card event has been applied to it since receipts were written. */
export function holdsReceipts(order: StoreOrder): boolean {
  return metaValue(order, META.cardEventIds) !== undefined;
}

/** The value of `_cardprovider_event_ids` once this event is applied: its id added, the oldest beyond the cap dropped. */
export function receiptsWith(order: StoreOrder, eventId: string): string {
  const ids = appliedEventIds(order).filter((id) => id !== eventId);
  ids.push(eventId);
  return JSON.stringify(ids.slice(-RECEIPTS_KEPT));
}
