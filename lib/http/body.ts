/** Request bodies with a size limit, refused as soon as known too large (docs/decisions.md#d6). */
import { InvalidRequestError, PayloadTooLargeError, RequestAbortedError } from '@/lib/errors';
import { readStreamBytes } from '@/lib/upstream/read-stream';

export const CHECKOUT_BODY_LIMIT = 32 * 1024;
export const WEBHOOK_BODY_LIMIT = 512 * 1024;

export async function readBodyText(request: Request, limit: number): Promise<string> {
  const length = request.headers.get('content-length');
  const declared = length !== null && /^\s*\d+\s*$/.test(length) ? Number(length) : undefined;
  if (declared !== undefined && declared > limit) throw new PayloadTooLargeError();
  const bytes = await readStreamBytes(request.body, limit, () => new RequestAbortedError('stream_error'));
  if (bytes === undefined) throw new PayloadTooLargeError();
  if (declared !== undefined && bytes.byteLength < declared) throw new RequestAbortedError('short_body');
  return bytes.toString('utf8');
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidRequestError([
      { code: 'custom', path: [], message: 'Request body must be valid JSON', input: undefined },
    ]);
  }
}
