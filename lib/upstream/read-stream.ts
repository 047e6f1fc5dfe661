/** Reading a request body (lib/http/body.ts) with a size limit, so no client can make the service buffer without bound. */

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
