// A private note written once: notes carry no meta, so the text is its own record, looked for before it is added
// (docs/contract.md#order-writes).
import type { Store } from '@/lib/store/woocommerce';

export async function addShopNoteOnce(store: Store, orderId: number, note: string): Promise<boolean> {
  const notes = await store.listOrderNotes(orderId);
  if (notes.some((existing) => existing.trim() === note.trim())) return false;
  await store.addPrivateNote(orderId, note);
  return true;
}
