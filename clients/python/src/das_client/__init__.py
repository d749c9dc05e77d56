"""Python client of the Dataset Access Service.

    from das_client import Client
    client = Client()                                   # DAS_API_KEY / DAS_API_URL or ~/.config/das/credentials
    df = client.episodes("so100-pick", "1.0.0", outcome="failure").to_pandas()
    client.pull("so100-pick", "1.0.0", "./so100-failures", episodes=list(df.episode_id))
"""

__version__ = "0.1.0"

from .client import Client, Episodes  # noqa: E402
from .errors import (  # noqa: E402
    AcknowledgementLimit,
    ApiError,
    BadRequest,
    BodyTooLarge,
    ConfigError,
    DasError,
    EpisodeWithdrawn,
    Forbidden,
    HttpsRequired,
    IdempotencyConflict,
    InternalError,
    InvalidBody,
    InvalidCursor,
    InvalidParameter,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    PullError,
    RateLimited,
    ScopeTooLarge,
    TransportError,
    Unauthorized,
    Unavailable,
    VersionNotLicensed,
    WithdrawnContent,
)
from .pull import PullSummary  # noqa: E402
from .sync import SyncError, SyncResult  # noqa: E402

__all__ = [
    "Client",
    "Episodes",
    "PullSummary",
    "SyncError",
    "SyncResult",
    "AcknowledgementLimit",
    "ApiError",
    "BadRequest",
    "BodyTooLarge",
    "ConfigError",
    "DasError",
    "EpisodeWithdrawn",
    "Forbidden",
    "HttpsRequired",
    "IdempotencyConflict",
    "InternalError",
    "InvalidBody",
    "InvalidCursor",
    "InvalidParameter",
    "MethodNotAllowed",
    "NotAcceptable",
    "NotFound",
    "PullError",
    "RateLimited",
    "ScopeTooLarge",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "VersionNotLicensed",
    "WithdrawnContent",
]
