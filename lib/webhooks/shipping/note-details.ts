/**
 * Shipment details that reach the note the customer reads (docs/decisions.md#d11):
 * tracking number, carrier and ship date.
 *
 * They come from whoever posts to the webhook (or from ShipStation), and the
 * store shows them to the customer in e-mails and the account page, so they
 * must not be a channel for markup, links or prose ("your card was declined,
 * call …"). Each is plain printable text of bounded length from a small
 * character set; anything else counts as absent, and the caller logs the field
 * name and the reason, never the value.
 */
import type { ShipmentNotice } from '@/lib/shipping/shipstation';

export type NoteDetailField = 'trackingNumber' | 'carrier' | 'shipDate';
export type NoteDetailRefusal = 'too_long' | 'not_plain_text' | 'looks_like_link';

interface DetailRule {
  maxLength: number;
  /** Every character allowed; letters and digits are ASCII only, so look-alike letters cannot spell a brand. */
  allowed: RegExp;
}

/**
 * Tracking numbers of the big carriers are 10 to 34 letters and digits,
 * sometimes grouped with spaces or dashes; carriers are a code (`stamps_com`)
 * or a short name (`U.S. Postal Service`); ship dates are ISO 8601 or a short
 * written date.
 */
export const NOTE_DETAIL_RULES: Record<NoteDetailField, DetailRule> = {
  trackingNumber: { maxLength: 64, allowed: /^[A-Za-z0-9 -]+$/ },
  carrier: { maxLength: 50, allowed: /^[A-Za-z0-9 _&.,()'-]+$/ },
  shipDate: { maxLength: 40, allowed: /^[A-Za-z0-9 :.,+/-]+$/ },
};

/** A dot before two letters reads as a host name (`evil.example`), even without `www.` or a scheme. */
const LINK_LIKE = /:\/\/|www\.|\.[A-Za-z]{2,}/i;

export function checkNoteDetail(field: NoteDetailField, value: string): NoteDetailRefusal | undefined {
  const rule = NOTE_DETAIL_RULES[field];
  if (value.length > rule.maxLength) return 'too_long';
  if (!rule.allowed.test(value)) return 'not_plain_text';
  if (LINK_LIKE.test(value)) return 'looks_like_link';
  return undefined;
}

export interface RefusedDetail {
  field: NoteDetailField;
  reason: NoteDetailRefusal;
  length: number;
}

/** The notice with every detail that may not reach a customer note made absent, and what was refused. */
export function customerSafeNotice(notice: ShipmentNotice): { notice: ShipmentNotice; refused: RefusedDetail[] } {
  const refused: RefusedDetail[] = [];
  const keep = (field: NoteDetailField, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    const reason = checkNoteDetail(field, value);
    if (reason === undefined) return value;
    refused.push({ field, reason, length: value.length });
    return undefined;
  };
  return {
    notice: {
      orderNumber: notice.orderNumber,
      trackingNumber: keep('trackingNumber', notice.trackingNumber),
      carrier: keep('carrier', notice.carrier),
      shipDate: keep('shipDate', notice.shipDate),
      // Never shown to the customer: kept as they came (ShipStation's id, a boolean).
      ...(notice.shipmentId !== undefined ? { shipmentId: notice.shipmentId } : {}),
      ...(notice.voided ? { voided: true } : {}),
    },
    refused,
  };
}
