"""One file from a signed URL into place: written to `<dest>.das-partial`, continued with a Range
request after an interruption, and renamed into place only once its size and SHA-256 match the
plan. A body is never read past `size_bytes + 1` bytes, whatever the store sends."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import httpx

from .client import MAX_WAIT, backoff_seconds, retry_after_seconds, wait_too_long

PARTIAL_SUFFIX = ".das-partial"
CHUNK = 1 << 16


def partial_path(dest: Path) -> Path:
    return dest.with_name(dest.name + PARTIAL_SUFFIX)


def shown(text: str) -> str:
    """Text from the server, safe to print: control and other unprintable characters escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def size_on_disk(dest: Path) -> Optional[int]:
    """The size of the regular file at `dest`, or None when there is none to read."""
    try:
        return dest.stat().st_size if dest.is_file() else None
    except OSError:
        return None


def local_state(dest: Path, file: dict[str, Any]) -> str:
    """'verified', 'missing' or 'corrupt' against the manifest."""
    size = size_on_disk(dest)
    if size is None:
        return "missing"
    if size != file["size_bytes"]:
        return "corrupt"
    return "verified" if sha256_file(dest) == file["sha256"] else "corrupt"


class Throttle:
    """One byte rate shared by every transfer."""

    def __init__(self, bytes_per_second: float) -> None:
        self._start = time.monotonic()
        self._taken = 0
        self.rate = bytes_per_second
        self._lock = threading.Lock()

    def take(self, n: int, stop: threading.Event) -> None:
        with self._lock:
            self._taken += n
            due = self._start + self._taken / self.rate
        wait = due - time.monotonic()
        if wait > 0:
            stop.wait(wait)


@dataclass
class TransferResult:
    ok: bool
    expired: bool = False
    reason: str = ""
    resumed_from: int = 0
    range_ignored: bool = False


class Interrupted(Exception):
    pass


def fetch_file(
    http: httpx.Client,
    file: dict[str, Any],
    url: str,
    dest: Path,
    *,
    stop: threading.Event,
    on_bytes: Callable[[int], None] = lambda n: None,
    on_wait: Callable[[str], None] = lambda what: None,
    throttle: Optional[Throttle] = None,
    max_attempts: int = 6,
) -> TransferResult:
    size = int(file["size_bytes"])
    temp = partial_path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    resumed_from = 0
    range_ignored = False
    restarted = False
    problem = "no attempt made"

    def wait(seconds: float, why: str) -> None:
        on_wait(f"{shown(file['path'])}: {why}; retrying in {seconds:.1f} s")
        if stop.wait(seconds):
            raise Interrupted()

    for attempt in range(1, max_attempts + 1):
        if stop.is_set():
            raise Interrupted()
        offset = temp.stat().st_size if temp.exists() else 0
        if offset > size:
            temp.unlink()
            offset = 0
        if offset < size or size == 0:
            if attempt == 1:
                resumed_from = offset
            headers = {"Range": f"bytes={offset}-"} if offset > 0 else {}
            try:
                with http.stream("GET", url, headers=headers) as response:
                    status = response.status_code
                    if status == 403:
                        return TransferResult(False, expired=True)
                    if status == 416:
                        temp.unlink(missing_ok=True)
                        problem = "the store refused the byte range"
                        continue
                    if status in (408, 429, 500, 502, 503, 504):
                        problem = f"the store answered {status}"
                        asked = retry_after_seconds(response.headers.get("retry-after"))
                        if asked is not None and asked > MAX_WAIT:
                            return TransferResult(False, reason=f"{problem}, and {wait_too_long(asked)}")
                        wait(asked or backoff_seconds(attempt), problem)
                        continue
                    if status == 404:
                        return TransferResult(False, reason="the store has no such object (404)")
                    append = False
                    if status == 206 and offset > 0:
                        content_range = response.headers.get("content-range", "")
                        parts = content_range.replace("bytes ", "").split("/")[0].split("-")
                        if not content_range.startswith("bytes ") or not parts[0].isdigit() or int(parts[0]) != offset:
                            temp.unlink(missing_ok=True)
                            problem = f"the store answered a different byte range ({shown(content_range)})"
                            continue
                        append = True
                    elif status == 200:
                        if offset > 0:
                            range_ignored = True
                    else:
                        return TransferResult(False, reason=f"the store answered HTTP {status}")
                    # At most one byte more than the manifest's size is read: enough to know it is wrong.
                    budget = size + 1 - (offset if append else 0)
                    with open(temp, "ab" if append else "wb") as out:
                        # Throttled, in pieces of a quarter second's worth, so that the rate is kept evenly.
                        piece = max(1024, min(CHUNK, int(throttle.rate / 4))) if throttle else CHUNK
                        for chunk in response.iter_bytes(piece):
                            if stop.is_set():
                                raise Interrupted()
                            chunk = chunk[:budget]
                            out.write(chunk)
                            budget -= len(chunk)
                            on_bytes(len(chunk))
                            if throttle:
                                throttle.take(len(chunk), stop)
                            if budget <= 0:
                                break
            except httpx.HTTPError as error:
                problem = f"the transfer broke off: {shown(str(error))}"
                wait(backoff_seconds(attempt), problem)
                continue
        got = temp.stat().st_size if temp.exists() else 0
        if got < size:
            problem = f"the store sent {got} of {size} bytes"
            continue
        digest = sha256_file(temp) if got == size else None
        if digest != file["sha256"]:
            temp.unlink(missing_ok=True)
            problem = f"{got} or more bytes instead of {size}" if digest is None else f"sha256 {digest} instead of {file['sha256']}"
            # A bad partial file from an earlier run may be to blame: fetch it whole, once.
            if not restarted and (resumed_from > 0 or attempt > 1):
                restarted = True
                continue
            return TransferResult(False, reason=f"verification failed: {problem}")
        os.replace(temp, dest)
        return TransferResult(True, resumed_from=resumed_from, range_ignored=range_ignored)
    return TransferResult(False, reason=f"gave up after {max_attempts} attempts: {problem}")
