/**
 * A private note for the shop, written once however often its event comes.
 * Order notes are WordPress comments, and WooCommerce's REST API gives them no
 * meta to carry a receipt, so the note is its own record: its text names the
 * Stripe object it is about and reads the same on every delivery, and it is
 * looked for among the order's notes before it is added. A note whose answer
 * was lost after WooCommerce stored it is found on the retry, not written
 * again. One read per note; refund and dispute events are rare.
 */
import type { Store } from '@/lib/store/types';

/** Adds the note unless the order already holds it; true when it was added now. */
export async function addShopNoteOnce(store: Store, orderId: number, note: string): Promise<boolean> {
  const notes = await store.listOrderNotes(orderId);
  if (notes.some((existing) => existing.trim() === note.trim())) return false;
  await store.addPrivateNote(orderId, note);
  return true;
}
