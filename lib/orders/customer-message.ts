/** Every message the service writes for the customer goes through here, as CUSTOMER_MESSAGES says (docs/decisions.md#customer-messages). */
import type { CustomerMessageSetting } from '@/lib/config';
import { keptCustomerNote, type OrderChange } from '@/lib/orders/mutation';
import { customerNoteKeptNote } from '@/lib/orders/notes';
import { addShopNoteOnce } from '@/lib/orders/shop-note';
import type { StoreOrder } from '@/lib/store/types';
import type { Store } from '@/lib/store/woocommerce';

/** Sent before the order update, so a retry after a lost answer finds the message rather than loses it. */
export async function sendCustomerMessage(store: Store, order: StoreOrder, change: OrderChange, setting: CustomerMessageSetting): Promise<OrderChange> {
  const { customerNote, customerNoteLine, ...rest } = change;
  const message = customerNote ?? customerNoteLine;
  if (message === undefined) return change;
  if (setting === 'order_notes') {
    // Unless already the newest note: a retry is not emailed twice, a message that comes back after another is.
    const [newest] = await store.listCustomerNotes(order.id);
    if (newest === undefined || newest.trim() !== message.trim()) await store.addCustomerNote(order.id, message);
    return rest;
  }
  const kept = customerNote === undefined ? undefined : Object.values(keptCustomerNote(order, customerNote))[0];
  if (kept !== undefined) await addShopNoteOnce(store, order.id, customerNoteKeptNote(kept));
  return change;
}
