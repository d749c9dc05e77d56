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
# Seconds the client waits at most before a retry. A server (or a store, or someone in between)
# that asks for more with Retry-After is answered with an error that says so at once, rather than
# holding the caller for an hour per retry.
MAX_WAIT = 60.0
# Pages a list is followed for at most: a million items at 500 a page, beyond any list of the
# service. A server that never stops answering a next cursor is stopped here, and one that answers
# a cursor it answered before at once.
MAX_PAGES = 2000
# The most of one answer read into memory: a page is a few hundred KB, a document less; a
# manifest's bound is larger (a version of a million files is about 350 MB of it).
MAX_ANSWER_BYTES = 64 * 1024 * 1024
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
# A plan lists every file of a pull with its URL (at most 100,000 files): as `das pull` bounds it (MAX_PLAN_BYTES).
MAX_PLAN_BYTES = 256 * 1024 * 1024


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
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def wait_too_long(seconds: float) -> str:
    """Why a retry is not waited for: the wait asked is longer than MAX_WAIT."""
    return f"it asks to wait {seconds:.0f} s before a retry (Retry-After), longer than the {MAX_WAIT:.0f} s this client waits: try again later"


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
        for page in self._client._pages(self._path, self._query):
            self.total = page["total"]
            yield from page["episodes"]

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



def plan_request(
    *,
    episode_ids: Optional[Sequence[str]] = None,
    filter: Optional[dict[str, Any]] = None,
    streams: Optional[Sequence[str]] = None,
    keep_original_indices: bool = False,
) -> dict[str, Any]:
    """The body of a plan request with only what was asked: what `Client.plan` sends and a pull's
    provenance records (so that a sync asks again exactly as the pull did)."""
    body: dict[str, Any] = {}
    if episode_ids is not None:
        body["episode_ids"] = list(episode_ids)
    if filter:
        body["filter"] = filter
    if streams is not None:
        body["streams"] = list(streams)
    if keep_original_indices:
        body["keep_original_indices"] = True
    return body

class Client:
    """The Dataset Access Service's API.

    The key comes from `api_key`, else `DAS_API_KEY`, else the profile file (`~/.config/das/credentials`,
    mode 0600); the base URL likewise from `base_url`, `DAS_API_URL` or the profile. 429 and 503 are
    retried after Retry-After (at most `max_retries` times; a Retry-After over MAX_WAIT, a minute, is
    raised at once), network failures after a short backoff. Answers are read up to MAX_ANSWER_BYTES
    (a manifest up to MAX_MANIFEST_BYTES) and lists followed for at most MAX_PAGES pages, stopping
    at a cursor answered before: it trusts the service for what it answers, never for how long or
    how much.
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
        return self._send(
            "GET", f"/datasets/{_seg(dataset_id)}/versions/{_seg(version)}/manifest", max_bytes=MAX_MANIFEST_BYTES
        )

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

    def plan(
        self,
        dataset_id: str,
        version: str,
        *,
        episode_ids: Optional[Sequence[str]] = None,
        filter: Optional[dict[str, Any]] = None,
        streams: Optional[Sequence[str]] = None,
        keep_original_indices: bool = False,
    ) -> dict[str, Any]:
        """The service's plan of a pull (POST .../plan): every file with where it goes, its size and
        SHA-256, how to get its bytes (one of the plan's `downloads`, each a disclosure, or a signed
        URL), and for a LeRobot version the `meta/` and row transforms that make it open. `pull`
        checks it (`das_client.plan.check_plan`) and carries it out; nothing else decides what a
        pull writes."""
        body = plan_request(
            episode_ids=episode_ids, filter=filter, streams=streams, keep_original_indices=keep_original_indices
        )
        path = f"/datasets/{_seg(dataset_id)}/versions/{_seg(version)}/plan"
        # Its Idempotency-Key makes a retry (after a gateway's 502 or a lost connection) the same plan, not a second entry.
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        return self._send("POST", path, body=body, headers=headers, max_bytes=MAX_PLAN_BYTES)

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
        for page in self._pages(path, query):
            items.extend(page[field])
        return items

    def _pages(self, path: str, query: Optional[dict[str, Any]] = None, page_size: int = PAGE) -> Iterator[dict[str, Any]]:
        """A list's pages, following `next_cursor`: stopped with TransportError at a cursor answered
        before (the list would go round for ever) and after MAX_PAGES pages."""
        seen: set[str] = set()
        cursor: Optional[str] = None
        pages = 0
        while True:
            page = self._get(path, {**(query or {}), "limit": page_size, "cursor": cursor})
            pages += 1
            yield page
            cursor = page.get("next_cursor")
            if not cursor:
                return
            if cursor in seen:
                raise TransportError(
                    f"{self.base_url}{path} answered a next cursor it had answered before: stopped after {pages} pages, since the list would never end"
                )
            if pages >= MAX_PAGES:
                raise TransportError(
                    f"{self.base_url}{path} still had a next page after {MAX_PAGES} pages: stopped (no list of the service is that long)"
                )
            seen.add(cursor)

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
        max_bytes: int = MAX_ANSWER_BYTES,
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
                with self._http.stream(method, url, params=params, headers=sent, content=content) as response:
                    data = _bounded_body(response, max_bytes, f"{method} {path}")
            except httpx.TransportError as error:
                # A service that cannot be reached at all is reported within seconds, not minutes.
                if attempt > min(self.max_retries, 3):
                    raise TransportError(f"Cannot reach {self.base_url}: {error}") from None
                self._sleep(backoff_seconds(attempt))
                continue
            if response.is_success:
                try:
                    return json.loads(data)
                except ValueError:
                    raise TransportError(
                        f"{method} {path} answered with a body that is not JSON (is {self.base_url} a Dataset Access Service?)"
                    ) from None
            error = _api_error(response, data)
            if _retryable(response.status_code, method, sent) and attempt <= self.max_retries:
                if error.retry_after is not None and error.retry_after > MAX_WAIT:
                    raise error_for(
                        error.status,
                        error.code,
                        f"{error.message} ({wait_too_long(error.retry_after)})",
                        error.request_id,
                        error.retry_after,
                    )
                self._sleep(error.retry_after if error.retry_after is not None else backoff_seconds(attempt))
                continue
            raise error


def _retryable(status: int, method: str, headers: dict[str, str]) -> bool:
    """429 and 503 say "later". 502 and 504 are a gateway's (a load balancer that lost the instance
    serving the request): it may or may not have been served, so only a request that is safe to
    send twice is sent again, a read, or a download or plan with its Idempotency-Key (which
    returns the same one)."""
    if status in (429, 503):
        return True
    return status in (502, 504) and (method == "GET" or "Idempotency-Key" in headers)


def _bounded_body(response: httpx.Response, limit: int, what: str) -> bytes:
    """An answer's body, read up to `limit` bytes: past it (or a Content-Length over it) the
    connection is dropped and the answer refused, so a server cannot fill the client's memory."""

    def refuse() -> TransportError:
        return TransportError(f"{what} answered with more than {limit} bytes: stopped reading it (no answer of the service is that large)")

    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise refuse()
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise refuse()
        chunks.append(chunk)
    return b"".join(chunks)


def _api_error(response: httpx.Response, data: bytes) -> ApiError:
    retry_after = retry_after_seconds(response.headers.get("retry-after"))
    try:
        envelope = json.loads(data)["error"]
        return error_for(
            response.status_code, str(envelope["code"]), str(envelope["message"]), envelope.get("request_id"), retry_after
        )
    except (ValueError, KeyError, TypeError):
        # Not the API's envelope: a proxy or load balancer in between said no.
        text = "".join(ch for ch in data[:800].decode("utf-8", "replace").strip()[:200] if ch.isprintable()) or response.reason_phrase
        return error_for(
            response.status_code, f"http_{response.status_code}", text, response.headers.get("x-request-id"), retry_after
        )


def _seg(value: str) -> str:
    return quote(value, safe="")


from .pull import PullSummary  # noqa: E402  (for the annotation above)
from .sync import SyncResult  # noqa: E402  (for the annotation above)
