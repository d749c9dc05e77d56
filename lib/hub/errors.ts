import { AppError, type ErrorCode } from "../errors";

/**
 * The Hub's own error codes, sent as `X-Error-Code` (with the message as `X-Error-Message`): its
 * clients turn them into their own exceptions (RepositoryNotFoundError, RevisionNotFoundError,
 * EntryNotFoundError, GatedRepoError). The body stays our envelope, whatever the code.
 */
export type HubErrorCode = "RepoNotFound" | "RevisionNotFound" | "EntryNotFound" | "GatedRepo";

export function hubError(code: ErrorCode, hubCode: HubErrorCode, message: string): AppError {
  return new AppError(code, message, { headers: { "X-Error-Code": hubCode, "X-Error-Message": headerText(message) } });
}

/**
 * A message as a header value: one line of printable ASCII (a path or an id may hold anything
 * else, which a header cannot carry); the body's envelope keeps it whole.
 */
export function headerText(message: string): string {
  return message.replace(/[^\x20-\x7e]/g, "?").slice(0, 1000);
}
