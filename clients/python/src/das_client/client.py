"""`Client`: every endpoint of the API, cursors followed for the caller, errors as typed exceptions."""

from __future__ import annotations

import email.utils
import json
import random
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, Union
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from . import __version__
from .config import resolve
from .errors import ApiError, TransportError, error_for

PAGE = 500
# Seconds the client waits at most for one Retry-After, whatever the server says.
MAX_WAIT = 3600.0


def episode_filter(
    *,
    outcome: Optional[str] = None,
    environment: Optional[str] = None,
    task: Optional[str] = None,
    contributor: Optional[str] = None,
    has_recovery: Optional[bool] = None,
    min_duration_s: Optional[float] = None,
    max_duration_s: Optional[float] = None,
) -> dict[str, Any]:
    """The episode filter as the API takes it in a download's `filter`, the fields left as None left out.

    Checked before anything is sent, with the API's own rules: `has_recovery` is a bool (the string
    "false" would be taken as true), the durations are non-negative seconds and the minimum is not
    above the maximum (a range upside down matches nothing, and is far more likely a slip).
    """
    for name, value in (("outcome", outcome), ("environment", environment), ("task", task), ("contributor", contributor)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    if has_recovery is not None and not isinstance(has_recovery, bool):
        raise TypeError(f"has_recovery must be True or False, not {has_recovery!r}")
    for name, value in (("min_duration_s", min_duration_s), ("max_duration_s", max_duration_s)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1e9):
            raise ValueError(f"{name} must be a number of seconds from 0 to 1e9, not {value!r}")
    if min_duration_s is not None and max_duration_s is not None and min_duration_s > max_duration_s:
        raise ValueError(f"min_duration_s ({min_duration_s}) must not exceed max_duration_s ({max_duration_s})")
    fields = {
        "outcome": outcome,
        "environment": environment,
        "task": task,
        "contributor": contributor,
        "has_recovery": has_recovery,
        "min_duration_s": min_duration_s,
        "max_duration_s": max_duration_s,
    }
    return {k: v for k, v in fields.items() if v is not None}


def _query_value(value: Any) -> str:
    """A filter value as the episode list's query takes it: true/false, and seconds as plain decimals (never 1e-05)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"{value:.9f}".rstrip("0").rstrip(".")
    return value


def api_base(url: str) -> str:
    """The API's base, always ending in /api/v1: `https://das.example.com` and `.../api/v1` both work."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise TransportError(f"{url!r} is not a URL; set DAS_API_URL (or base_url=) to e.g. https://das.example.com")
    path = parts.path.rstrip("/")
    if not path.endswith("/api/v1"):
        path = f"{path}/api/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def retry_after_seconds(header: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if header is None:
        return None
    value = header.strip()
    if value.isdigit():
        return min(float(value), MAX_WAIT)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when.timestamp() - time.time()), MAX_WAIT)


def backoff_seconds(attempt: int) -> float:
    """1, 2, 4 ... 60 s for the n-th attempt, less up to 25% so that clients do not retry in step."""
    return min(60.0, 2.0 ** max(0, attempt - 1)) * (0.75 + random.random() * 0.25)


class Episodes:
    """The episodes matching a query, fetched page by page as it is iterated; `to_pandas()` for a DataFrame."""

    def __init__(self, client: "Client", path: str, query: dict[str, Any]) -> None:
        self._client = client
        self._path = path
        self._query = query
        self.total: Optional[int] = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        cursor: Optional[str] = None
        while True:
            page = self._client._get(self._path, {**self._query, "limit": PAGE, "cursor": cursor})
            self.total = page["total"]
            yield from page["episodes"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def to_list(self) -> list[dict[str, Any]]:
        return list(self)

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per episode (`pip install das-client[pandas]`)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the installation
            raise ImportError("to_pandas() needs pandas: pip install 'das-client[pandas]'") from None
        columns = ["episode_id", "task", "environment", "duration_s", "outcome", "has_recovery", "contributor", "streams"]
        rows = list(self)
        extra = [k for row in rows for k in row if k not in columns]
        return pd.DataFrame(rows, columns=columns + sorted(set(extra)))


class Client:
    """The Dataset Access Service's API.

    The key comes from `api_key`, else `DAS_API_KEY`, else the profile file (`~/.config/das/credentials`,
    mode 0600); the base URL likewise from `base_url`, `DAS_API_URL` or the profile. 429 and 503 are
    retried after Retry-After (at most `max_retries` times), network failures after a short backoff.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        profile: Optional[str] = None,
        profile_file: Optional[Union[str, Path]] = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key, url = resolve(api_key, base_url, profile, Path(profile_file) if profile_file else None)
        self.base_url = api_base(url)
        self.max_retries = max_retries
        self._sleep = sleep
        self._key = key
        self._http = httpx.Client(
            timeout=timeout,
            follow_redirects=False,
            headers={"User-Agent": f"das-client-python/{__version__}", "Accept": "application/json"},
        )

    def __repr__(self) -> str:  # never the key
        return f"Client(base_url={self.base_url!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the endpoints -------------------------------------------------------------------------

    def datasets(self) -> list[dict[str, Any]]:
        """Datasets the key holds a licence for (every page)."""
        return self._collect("/datasets", "datasets")

    def versions(self, dataset_id: str) -> list[dict[str, Any]]:
        """Released versions of a dataset, newest first, each with `licensed` and its changelog."""
        return self._collect(f"/datasets/{_seg(dataset_id)}/versions", "versions")

    def manifest(self, dataset_id: str, version: str) -> dict[str, Any]:
        """Every file of a version (path, size_bytes, sha256, episode_ids, stream), and its LeRobot `format` if any."""
        return self._get(f"/datasets/{_seg(dataset_id)}/versions/{_seg(version)}/manifest")

    def episodes(
        self,
        dataset_id: str,
        version: str,
        *,
        outcome: Optional[str] = None,
        environment: Optional[str] = None,
        task: Optional[str] = None,
        contributor: Optional[str] = None,
        has_recovery: Optional[bool] = None,
        min_duration_s: Optional[float] = None,
        max_duration_s: Optional[float] = None,
    ) -> Episodes:
        """The episodes of a version matching the filters, iterated page by page (`.to_pandas()`, `.total`).

        Every filter given must hold: exact `outcome`, `environment`, `task`, `contributor`;
        `has_recovery` True or False; a closed duration range `min_duration_s` to `max_duration_s`.
        """
        flt = episode_filter(
            outcome=outcome,
            environment=environment,
            task=task,
            contributor=contributor,
            has_recovery=has_recovery,
            min_duration_s=min_duration_s,
            max_duration_s=max_duration_s,
        )
        query = {k: _query_value(v) for k, v in flt.items()}
        return Episodes(self, f"/datasets/{_seg(dataset_id)}/versions/{_seg(version)}/episodes", query)

    def annotations(self, episode_id: str, version: Optional[str] = None) -> list[dict[str, Any]]:
        """An episode's subtask spans (every page), in `version` or the newest licensed one holding it."""
        return self._collect(f"/episodes/{_seg(episode_id)}/annotations", "annotations", {"version": version})

    def download(
        self,
        dataset_id: str,
        version: str,
        *,
        episode_ids: Optional[Sequence[str]] = None,
        outcome: Optional[str] = None,
        environment: Optional[str] = None,
        task: Optional[str] = None,
        contributor: Optional[str] = None,
        has_recovery: Optional[bool] = None,
        min_duration_s: Optional[float] = None,
        max_duration_s: Optional[float] = None,
        streams: Optional[Sequence[str]] = None,
        include_version_files: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> dict[str, Any]:
        """A download: signed URLs (15 minutes) for a scope of a version, recorded in the disclosure log.

        Every call is a new disclosure, except a repeat with the same `idempotency_key` and body, which
        returns the same download (same id, same URLs, same expiry). Retries after 503 or a lost
        connection reuse the key, so they never disclose twice.
        """
        body: dict[str, Any] = {"dataset_id": dataset_id, "version": version}
        if episode_ids is not None:
            body["episode_ids"] = list(episode_ids)
        flt = episode_filter(
            outcome=outcome,
            environment=environment,
            task=task,
            contributor=contributor,
            has_recovery=has_recovery,
            min_duration_s=min_duration_s,
            max_duration_s=max_duration_s,
        )
        if flt:
            body["filter"] = flt
        if streams is not None:
            body["streams"] = list(streams)
        if include_version_files:
            body["include_version_files"] = True
        return self._create_download(body, idempotency_key)

    def preview(
        self, episode_id: str, *, version: Optional[str] = None, streams: Optional[Sequence[str]] = None
    ) -> dict[str, Any]:
        """Signed URLs to watch an episode's video streams, disclosed with channel `preview`."""
        body: dict[str, Any] = {"episode_id": episode_id}
        if version is not None:
            body["version"] = version
        if streams is not None:
            body["streams"] = list(streams)
        return self._send("POST", "/previews", body=body)

    def licences(self) -> list[dict[str, Any]]:
        """The key's licences usable now (every page): dataset, version, term and terms document."""
        return self._collect("/licences", "licences")

    def notices(self) -> list[dict[str, Any]]:
        """The notices of the key's organisation (every page), newest first, each a dict told apart by
        its ``kind``: ``withdrawal`` (episodes to delete, then acknowledge), ``new_version`` (a new
        version of a dataset it holds an earlier version of) or ``licence_ending`` (30 or 7 days
        before a licence ends)."""
        return self._collect("/notices", "notices")

    def acknowledge(self, notice_id: str, statement: str, deleted_paths: Sequence[str] = ()) -> dict[str, Any]:
        """Acknowledges a notice with a statement of what was deleted; acknowledgements are append-only."""
        body = {"statement": statement, "deleted_paths": list(deleted_paths)}
        return self._send("POST", f"/notices/{_seg(notice_id)}/acknowledgements", body=body)

    def sync(self, directory: Union[str, Path], dry_run: bool = False, statement: Optional[str] = None) -> "SyncResult":
        """Brings a pulled directory in line with the withdrawal notices, as `das sync` does.

        Reads the directory's das-provenance.json, deletes every file of a withdrawn episode (and
        what the pull wrote from it), writes a LeRobot directory's meta/ again for the episodes left,
        and acknowledges each notice with the paths deleted. With dry_run it only says what it would
        do. See `das_client.sync.sync`."""
        from .sync import sync

        return sync(self, directory, dry_run=dry_run, statement=statement)

    def openapi(self) -> dict[str, Any]:
        """The API's OpenAPI 3.1 document."""
        return self._get("/openapi.json")

    def pull(
        self,
        dataset_id: str,
        version: str,
        dest: Union[str, Path],
        episodes: Optional[Sequence[str]] = None,
        streams: Optional[Sequence[str]] = None,
        **options: Any,
    ) -> "PullSummary":
        """Pulls a scope of a version into `dest`, as `das pull` does; see `das_client.pull.pull`."""
        from .pull import pull

        return pull(self, dataset_id, version, dest, episodes=episodes, streams=streams, **options)

    # -- HTTP ----------------------------------------------------------------------------------

    def _create_download(self, body: dict[str, Any], idempotency_key: Optional[str] = None) -> dict[str, Any]:
        key = idempotency_key or str(uuid.uuid4())
        return self._send("POST", "/downloads", body=body, headers={"Idempotency-Key": key})

    def _collect(self, path: str, field: str, query: Optional[dict[str, Any]] = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: Optional[str] = None
        while True:
            page = self._get(path, {**(query or {}), "limit": PAGE, "cursor": cursor})
            items.extend(page[field])
            cursor = page.get("next_cursor")
            if not cursor:
                return items

    def _get(self, path: str, query: Optional[dict[str, Any]] = None) -> Any:
        return self._send("GET", path, query=query)

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: Optional[dict[str, Any]] = None,
        body: Any = None,
        headers: Optional[dict[str, str]] = None,
    ) -> Any:
        url = f"{self.base_url}{path}"
        params = {k: str(v) for k, v in (query or {}).items() if v is not None}
        sent = {"Authorization": f"Bearer {self._key}", **(headers or {})}
        content = None
        if body is not None:
            sent["Content-Type"] = "application/json"
            content = json.dumps(body).encode()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(method, url, params=params, headers=sent, content=content)
            except httpx.TransportError as error:
                # A service that cannot be reached at all is reported within seconds, not minutes.
                if attempt > min(self.max_retries, 3):
                    raise TransportError(f"Cannot reach {self.base_url}: {error}") from None
                self._sleep(backoff_seconds(attempt))
                continue
            if response.is_success:
                try:
                    return response.json()
                except ValueError:
                    raise TransportError(
                        f"{method} {path} answered with a body that is not JSON (is {self.base_url} a Dataset Access Service?)"
                    ) from None
            error = _api_error(response)
            if response.status_code in (429, 503) and attempt <= self.max_retries:
                self._sleep(error.retry_after if error.retry_after is not None else backoff_seconds(attempt))
                continue
            raise error


def _api_error(response: httpx.Response) -> ApiError:
    retry_after = retry_after_seconds(response.headers.get("retry-after"))
    try:
        envelope = response.json()["error"]
        return error_for(
            response.status_code, str(envelope["code"]), str(envelope["message"]), envelope.get("request_id"), retry_after
        )
    except (ValueError, KeyError, TypeError):
        # Not the API's envelope: a proxy or load balancer in between said no.
        text = "".join(ch for ch in response.text.strip()[:200] if ch.isprintable()) or response.reason_phrase
        return error_for(
            response.status_code, f"http_{response.status_code}", text, response.headers.get("x-request-id"), retry_after
        )


def _seg(value: str) -> str:
    return quote(value, safe="")


from .pull import PullSummary  # noqa: E402  (for the annotation above)
from .sync import SyncResult  # noqa: E402  (for the annotation above)
