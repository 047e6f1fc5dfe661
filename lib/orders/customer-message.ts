/** Every message the service writes for the customer goes through here, as CUSTOMER_MESSAGES says (docs/decisions.md#customer-messages). */
import type { CustomerMessageSetting } from '@/lib/config';
import { keptCustomerNote, type OrderChange } from '@/lib/orders/mutation';
import { customerNoteKeptNote } from '@/lib/orders/notes';
import type { Store, StoreOrder } from '@/lib/store/types';

/**
 * Sends a change's customer message (`customerNote`, or `customerNoteLine`) the way the setting says, before the
 * order update, and returns the change to write:
 * - `customer_note`: the field takes the message; the first time it replaces the customer's own note, the shop is
 *   shown that note in a private note first (the update itself keeps it in meta: mutation.ts, keptCustomerNote);
 * - `order_notes`: the field is left to the customer; the message becomes a customer order note (WooCommerce
 *   emails it), sent before the update so a retry after a lost answer finds it rather than losing it.
 */
export async function sendCustomerMessage(store: Store, order: StoreOrder, change: OrderChange, setting: CustomerMessageSetting): Promise<OrderChange> {
  const { customerNote, customerNoteLine, ...rest } = change;
  const message = customerNote ?? customerNoteLine;
  if (message === undefined) return change;
  if (setting === 'order_notes') {
    await addCustomerNoteOnce(store, order.id, message);
    return rest;
  }
  if (customerNote !== undefined) await showKeptCustomerNote(store, order, customerNote);
  return change;
}

/** The private note showing the shop the customer's own note, when `replacement` is the first message to replace it. */
async function showKeptCustomerNote(store: Store, order: StoreOrder, replacement: string): Promise<void> {
  const kept = Object.values(keptCustomerNote(order, replacement))[0];
  if (kept === undefined) return;
  // Found by its text on a retry (as lib/webhooks/card/shop-note.ts does), so it is written once.
  const note = customerNoteKeptNote(kept);
  if (!(await store.listOrderNotes(order.id)).some((existing) => existing.trim() === note.trim())) await store.addPrivateNote(order.id, note);
}

/**
 * Adds a customer order note unless it is already the newest one: the same message again (a retry, a second
 * delivery) is not emailed twice, while a message that comes back after another one is.
 */
async function addCustomerNoteOnce(store: Store, orderId: number, note: string): Promise<boolean> {
  const [newest] = await store.listCustomerNotes(orderId);
  if (newest !== undefined && newest.trim() === note.trim()) return false;
  await store.addCustomerNote(orderId, note);
  return true;
}
