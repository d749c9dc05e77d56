"""The API's stable error codes as exception classes, and the client's own errors."""

from __future__ import annotations

from typing import Optional


class DasError(Exception):
    """Base of every error this package raises."""


class ConfigError(DasError):
    """No API key or base URL, or a profile file that may not be used."""


class TransportError(DasError):
    """The service could not be reached, or answered with something that is not the API."""


class PullError(DasError):
    """A pull request that cannot be carried out as asked (an unknown stream or episode): nothing was downloaded."""


class ApiError(DasError):
    """An error answer of the API: `{"error": {"code", "message", "request_id"}}` with its HTTP status."""

    code = "api_error"

    def __init__(
        self, status: int, code: str, message: str, request_id: Optional[str], retry_after: Optional[float] = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" + (f" ({self.request_id})" if self.request_id else "")


class BadRequest(ApiError):
    """400: a parameter, cursor or body the API refuses."""


class InvalidParameter(BadRequest):
    code = "invalid_parameter"


class InvalidCursor(BadRequest):
    code = "invalid_cursor"


class InvalidBody(BadRequest):
    code = "invalid_body"


class Unauthorized(ApiError):
    code = "unauthorized"


class Forbidden(ApiError):
    code = "forbidden"


class VersionNotLicensed(Forbidden):
    code = "version_not_licensed"


class HttpsRequired(Forbidden):
    code = "https_required"


class NotFound(ApiError):
    code = "not_found"


class EpisodeWithdrawn(ApiError):
    """410: the episode was withdrawn (consent withdrawn): it is gone from every list, file and preview."""

    code = "episode_withdrawn"


class WithdrawnContent(ApiError):
    """422: a file of the request also holds a withdrawn episode; the message names files and episodes."""

    code = "withdrawn_content"


class MethodNotAllowed(ApiError):
    code = "method_not_allowed"


class NotAcceptable(ApiError):
    code = "not_acceptable"


class IdempotencyConflict(ApiError):
    code = "idempotency_conflict"


class AcknowledgementLimit(ApiError):
    """409: the notice has 10 acknowledgements already, the most one takes; each is kept."""

    code = "acknowledgement_limit"


class BodyTooLarge(ApiError):
    """413: the request's body is over the service's limit (1,000,000 bytes): split the request."""

    code = "body_too_large"


class ScopeTooLarge(ApiError):
    code = "scope_too_large"


class RateLimited(ApiError):
    """429; `retry_after` is the seconds the API asked to wait."""

    code = "rate_limited"


class InternalError(ApiError):
    code = "internal_error"


class Unavailable(ApiError):
    """503; `retry_after` is the seconds the API asked to wait."""

    code = "unavailable"


ERROR_CLASSES: dict[str, type[ApiError]] = {
    cls.code: cls
    for cls in (
        InvalidParameter,
        InvalidCursor,
        InvalidBody,
        Unauthorized,
        VersionNotLicensed,
        HttpsRequired,
        Forbidden,
        NotFound,
        EpisodeWithdrawn,
        MethodNotAllowed,
        NotAcceptable,
        IdempotencyConflict,
        AcknowledgementLimit,
        BodyTooLarge,
        ScopeTooLarge,
        WithdrawnContent,
        RateLimited,
        InternalError,
        Unavailable,
    )
}


def error_for(
    status: int, code: str, message: str, request_id: Optional[str], retry_after: Optional[float]
) -> ApiError:
    """The exception for an error answer: by its stable code, else by its status (a proxy's answer)."""
    cls = ERROR_CLASSES.get(code)
    if cls is None:
        by_status = {
            400: BadRequest,
            401: Unauthorized,
            403: Forbidden,
            404: NotFound,
            413: BodyTooLarge,
            429: RateLimited,
            503: Unavailable,
        }
        cls = by_status.get(status, InternalError if status >= 500 else ApiError)
    return cls(status, code, message, request_id, retry_after)
