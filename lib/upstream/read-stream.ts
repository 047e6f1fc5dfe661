/**
 * Reading a byte stream with a size limit. Used for upstream responses (and,
 * through lib/http/body.ts, request bodies), so neither can make the service
 * buffer without bound.
 */

/** Reads a byte stream as UTF-8 text, or undefined (reading stops) past `limit` bytes; a failing stream throws its own error. */
export async function readStreamText(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<string | undefined> {
  return (await readStreamBytes(stream, limit, (error) => error))?.toString('utf8');
}

/** The stream's bytes, or undefined once more than `limit` have arrived; a failing read throws `readFailed(error)`. */
export async function readStreamBytes(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  readFailed: (error: unknown) => unknown,
): Promise<Buffer | undefined> {
  if (!stream) return Buffer.alloc(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (error) {
      throw readFailed(error);
    }
    if (next.done) break;
    size += next.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks);
}
