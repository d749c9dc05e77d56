/**
 * The one table of stable error codes (the API's contract), the one error class the domain throws,
 * and the one function that builds error bodies. Nothing else in the product shapes an error.
 */
export const ERROR_STATUS = {
  invalid_parameter: 400,
  invalid_cursor: 400,
  invalid_body: 400,
  unauthorized: 401,
  version_not_licensed: 403,
  https_required: 403,
  forbidden: 403,
  not_found: 404,
  episode_withdrawn: 410,
  method_not_allowed: 405,
  not_acceptable: 406,
  idempotency_conflict: 409,
  acknowledgement_limit: 409,
  body_too_large: 413,
  scope_too_large: 422,
  withdrawn_content: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers the error needs (Retry-After, WWW-Authenticate, Allow). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }
}

export type ErrorBody = { error: { code: ErrorCode; message: string; request_id: string } };

export function errorBody(code: ErrorCode, message: string, requestId: string): ErrorBody {
  return { error: { code, message, request_id: requestId } };
}

/** The same message for "does not exist" and "exists but not licensed", so scope cannot be enumerated. */
export const NOT_VISIBLE = {
  dataset: "No such dataset is available to you.",
  episode: "No such episode is available to you.",
  download: "No such download is available to you.",
  notice: "No such notice is addressed to you.",
} as const;
