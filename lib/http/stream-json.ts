import { errorFields, log } from "../log";
import { JSON_HEADERS } from "./respond";
import { streamText } from "./stream-text";

const ITEMS_PER_CHUNK = 500;

/**
 * A JSON object whose last member is a long array, written as it is read: `head` first, then the
 * array items in chunks. Memory stays flat however long the array is. A failure half way ends the
 * stream early, leaving invalid JSON, so a client can never mistake a cut-off body for a whole one.
 */
export function streamJsonObject(
  head: object,
  arrayName: string,
  items: AsyncIterable<unknown>,
  requestId: string,
): Response {
  return streamText(jsonObjectChunks(head, arrayName, items, requestId), JSON_HEADERS);
}

async function* jsonObjectChunks(
  head: object,
  arrayName: string,
  items: AsyncIterable<unknown>,
  requestId: string,
): AsyncGenerator<string> {
  yield `${JSON.stringify(head).slice(0, -1)},${JSON.stringify(arrayName)}:[`;
  let separator = "";
  let batch: string[] = [];
  try {
    for await (const item of items) {
      batch.push(JSON.stringify(item));
      if (batch.length === ITEMS_PER_CHUNK) {
        yield separator + batch.join(",");
        separator = ",";
        batch = [];
      }
    }
  } catch (error) {
    log.error("stream failed", { request_id: requestId, ...errorFields(error) });
    throw error;
  }
  yield `${batch.length ? separator + batch.join(",") : ""}]}`;
}
