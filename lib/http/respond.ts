import { AppError, errorBody } from "../errors";
import { errorFields, log } from "../log";

// PostgreSQL SQLSTATEs and postgres.js codes that mean "the database is not reachable right now".
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  // A write to a socket the server has just closed (a killed backend), before the read sees it.
  "EPIPE",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  // PgBouncer's own answers when it cannot reach or keep the server ("server login has been failing",
  // "server conn crashed?"): a connection exception of PostgreSQL's class 08 like the above.
  "08P01",
  // A write sent to a server that has just become a standby (a failover in progress).
  "25006",
  // A serialisation failure or deadlock is transient too: the client should simply retry.
  "40001",
  "40P01",
  // The service's own limits (DB_STATEMENT_TIMEOUT_S): a statement or lock wait that ran out of
  // time, or a transaction ended for idling, means an overloaded or stuck database.
  "57014",
  "55P03",
  "25P03",
]);

const RETRY_AFTER_UNAVAILABLE_S = 5;

function isUnavailable(error: unknown): boolean {
  for (let e = error; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
    if ((e as { name?: unknown }).name === "StoreUnavailableError") return true;
  }
  return false;
}

/**
 * Maps anything thrown to the stable envelope; causes of 500 and 503 go to the log (what
 * `errorFields` allows of them: never a query's parameters), never to the client.
 */
export function toAppError(error: unknown, requestId: string): AppError {
  if (error instanceof AppError) return error;
  if (isUnavailable(error)) {
    log.warn("dependency unavailable", { request_id: requestId, error: errorFields(error).error });
    return new AppError(
      "unavailable",
      "The service is temporarily unavailable. Retry after the number of seconds in Retry-After.",
      {
        headers: { "Retry-After": String(RETRY_AFTER_UNAVAILABLE_S) },
      },
    );
  }
  log.error("unhandled error", { request_id: requestId, ...errorFields(error) });
  return new AppError("internal_error", "Something went wrong on our side. Quote the request id when reporting it.");
}

export const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" } as const;

export function errorResponse(error: AppError, requestId: string): Response {
  return new Response(JSON.stringify(errorBody(error.code, error.message, requestId)), {
    status: error.status,
    headers: { ...JSON_HEADERS, ...error.headers },
  });
}
