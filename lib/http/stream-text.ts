/**
 * Text gathered into a chunk before it is written: every chunk costs the same trip through the
 * web stream and Node's response whatever its size, so an export of a million short lines sent
 * line by line spends its time there rather than reading the database.
 */
const CHUNK_CHARS = 64 * 1024;

/** A response streamed from an async iterable of text pieces, e.g. an export of millions of rows, in chunks of about 64 KiB. */
export function streamText(pieces: AsyncIterable<string>, headers: Record<string, string>): Response {
  const encoder = new TextEncoder();
  const iterator = pieces[Symbol.asyncIterator]();
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk = "";
        while (chunk.length < CHUNK_CHARS) {
          const next = await iterator.next();
          if (next.done) {
            if (chunk) controller.enqueue(encoder.encode(chunk));
            controller.close();
            return;
          }
          chunk += next.value;
        }
        controller.enqueue(encoder.encode(chunk));
      },
      async cancel() {
        await iterator.return?.();
      },
    }),
    { headers },
  );
}
