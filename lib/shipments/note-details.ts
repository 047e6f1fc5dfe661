// Shipment details that reach the customer note (docs/decisions.md#d11): bounded plain text, else absent, so no
// sender can put markup, links or prose ("your card was declined, call …") before the customer.
import type { ShipmentNotice } from '@/lib/shipment-notices';

export type NoteDetailRefusal = 'too_long' | 'not_plain_text' | 'looks_like_link';

/**
 * Tracking numbers 10–34 letters and digits, carriers a code or short name (`U.S. Postal Service`), dates ISO or written;
 * letters and digits ASCII only, so look-alike letters cannot spell a brand.
 */
const NOTE_DETAIL_RULES = {
  trackingNumber: { maxLength: 64, allowed: /^[A-Za-z0-9 -]+$/ },
  carrier: { maxLength: 50, allowed: /^[A-Za-z0-9 _&.,()'-]+$/ },
  shipDate: { maxLength: 40, allowed: /^[A-Za-z0-9 :.,+/-]+$/ },
};

export type NoteDetailField = keyof typeof NOTE_DETAIL_RULES;

/** A dot before two letters reads as a host name (`evil.example`), even without `www.` or a scheme. */
const LINK_LIKE = /:\/\/|www\.|\.[A-Za-z]{2,}/i;

export function checkNoteDetail(field: NoteDetailField, value: string): NoteDetailRefusal | undefined {
  const rule = NOTE_DETAIL_RULES[field];
  if (value.length > rule.maxLength) return 'too_long';
  if (!rule.allowed.test(value)) return 'not_plain_text';
  if (LINK_LIKE.test(value)) return 'looks_like_link';
  return undefined;
}

/** The notice with every detail the customer may not see left out, and which were, for the log. */
export function customerSafeNotice(notice: ShipmentNotice) {
  const refused: { field: NoteDetailField; reason: NoteDetailRefusal; length: number }[] = [];
  const keep = (field: NoteDetailField, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    const reason = checkNoteDetail(field, value);
    if (reason === undefined) return value;
    refused.push({ field, reason, length: value.length });
    return undefined;
  };
  const safe: ShipmentNotice = {
    orderNumber: notice.orderNumber,
    trackingNumber: keep('trackingNumber', notice.trackingNumber),
    carrier: keep('carrier', notice.carrier),
    shipDate: keep('shipDate', notice.shipDate),
    // Never shown to the customer: kept as they came (ShipStation's id, a boolean).
    ...(notice.shipmentId !== undefined ? { shipmentId: notice.shipmentId } : {}),
    ...(notice.voided ? { voided: true } : {}),
  };
  return { notice: safe, refused };
}
