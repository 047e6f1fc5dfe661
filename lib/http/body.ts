/**
 * Reading request bodies with a size limit (DECISIONS 6): a body over the limit
 * is refused with 413 as soon as it is known to be too large, without reading on.
 */
import { InvalidRequestError, PayloadTooLargeError } from '@/lib/errors';

export const CHECKOUT_BODY_LIMIT = 32 * 1024;
export const WEBHOOK_BODY_LIMIT = 512 * 1024;

/** The raw body as text, or PayloadTooLargeError once more than `limit` bytes have arrived. */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError();
  const text = await readStreamText(request.body, limit);
  if (text === undefined) throw new PayloadTooLargeError();
  return text;
}

/**
 * Reads a byte stream as UTF-8 text, or answers undefined (and stops reading)
 * as soon as more than `limit` bytes have arrived. Used for request bodies and
 * for upstream responses alike, so neither can make the service buffer without bound.
 */
export async function readStreamText(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<string | undefined> {
  if (!stream) return '';
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses JSON text; malformed JSON is an invalid request with a zod-shaped issue, never a 500. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidRequestError([
      { code: 'custom', path: [], message: 'Request body must be valid JSON', input: undefined },
    ]);
  }
}
