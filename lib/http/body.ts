/**
 * Reading request bodies with a size limit (docs/decisions.md#d6): a body over the limit
 * is refused with 413 as soon as it is known to be too large, without reading on.
 */
import { InvalidRequestError, PayloadTooLargeError, RequestAbortedError } from '@/lib/errors';
import { readStreamBytes } from '@/lib/upstream/read-stream';

export const CHECKOUT_BODY_LIMIT = 32 * 1024;
export const WEBHOOK_BODY_LIMIT = 512 * 1024;

/** Content-Length as a number of bytes, or undefined when absent (chunked) or not one number. */
function declaredLength(headers: Headers): number | undefined {
  const value = headers.get('content-length');
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * The raw body as text, or PayloadTooLargeError once more than `limit` bytes
 * have arrived, or RequestAbortedError when the body did not arrive whole:
 * the client's connection failed while it was being read (closed mid-body, a
 * malformed chunked encoding), or it ended before its Content-Length. Either
 * is the client's doing, so it must not surface as the service's own failure.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = declaredLength(request.headers);
  if (declared !== undefined && declared > limit) throw new PayloadTooLargeError();
  const bytes = await readStreamBytes(request.body, limit, () => new RequestAbortedError('stream_error'));
  if (bytes === undefined) throw new PayloadTooLargeError();
  if (declared !== undefined && bytes.byteLength < declared) throw new RequestAbortedError('short_body');
  return bytes.toString('utf8');
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
