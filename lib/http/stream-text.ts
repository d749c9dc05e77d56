import { newRequestId } from "./request-id";
import { toAppError } from "./respond";

/**
 * Text gathered into a chunk before it is written: every chunk costs the same trip through the
 * web stream and Node's response whatever its size, so an export of a million short lines sent
 * line by line spends its time there rather than reading the database.
 */
const CHUNK_CHARS = 64 * 1024;

/**
 * A response streamed from an async iterable of text pieces, e.g. an export of millions of rows, in
 * chunks of about 64 KiB. A piece may also be UTF-8 bytes already (a CSV export's batch), which go
 * out as they are.
 */
export function streamText(pieces: AsyncIterable<string | Uint8Array>, headers: Record<string, string>): Response {
  const encoder = new TextEncoder();
  const iterator = pieces[Symbol.asyncIterator]();
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk = "";
        let sent = 0;
        const sendText = () => {
          if (!chunk) return;
          controller.enqueue(encoder.encode(chunk));
          sent += chunk.length;
          chunk = "";
        };
        try {
          while (sent + chunk.length < CHUNK_CHARS) {
            const next = await iterator.next();
            if (next.done) {
              sendText();
              controller.close();
              return;
            }
            if (typeof next.value === "string") {
              chunk += next.value;
              continue;
            }
            // Text gathered before a piece of bytes goes first, in order.
            sendText();
            controller.enqueue(next.value);
            sent += next.value.length;
          }
        } catch (error) {
          // The answer has begun and can only break off. What broke it goes to our log as
          // errorFields allows; the server, which logs a stream's error as it is, gets none of its
          // text (a database error's message can hold a query's parameters).
          controller.error(new Error(toAppError(error, newRequestId()).message));
          return;
        }
        sendText();
      },
      async cancel() {
        await iterator.return?.();
      },
    }),
    { headers },
  );
}
