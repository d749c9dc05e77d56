"""`pull`: a scope of a version into a directory, with the same result as `das pull` for the same
arguments (lib/client/pull.ts): the files at their paths, each SHA-256-checked, resumable, in
parallel; URLs that expire on the way requested again; a LeRobot version written as a LeRobot
dataset of the delivered episodes, with `das-provenance.json`."""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import httpx

from .client import episode_filter
from .errors import PullError
from .plan import PlannedRequest, Scope, files_in_scope, narrowed, plan_requests
from .transfer import Interrupted, Throttle, destination, fetch_file, local_state, partial_path, sha256_file, shown

if TYPE_CHECKING:
    from .client import Client


@dataclass
class PullSummary:
    """What a pull did; the same fields as `das pull --json`."""

    dataset_id: str
    version: str
    dir: str
    files: int = 0
    bytes: int = 0
    already_verified: int = 0
    downloaded: int = 0
    resumed: int = 0
    refetched_corrupt: int = 0
    bytes_received: int = 0
    downloads: list[str] = field(default_factory=list)
    co_delivered_episode_ids: list[str] = field(default_factory=list)
    url_renewals: int = 0
    range_ignored: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    lerobot: Optional[dict[str, Any]] = None

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Progress:
    def __init__(self, files: int, total_bytes: int, enabled: bool) -> None:
        self._bar = None
        if enabled and files:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total_bytes, unit="B", unit_scale=True, unit_divisor=1024, desc=f"0/{files} files", file=sys.stderr
            )
        self._files = files
        self._done = 0
        self._lock = threading.Lock()

    def bytes(self, n: int) -> None:
        if self._bar is not None:
            with self._lock:
                self._bar.update(n)

    def file_done(self) -> None:
        with self._lock:
            self._done += 1
            if self._bar is not None:
                self._bar.set_description(f"{self._done}/{self._files} files")

    def log(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def pull(
    client: "Client",
    dataset_id: str,
    version: str,
    dest: Union[str, Path],
    *,
    episodes: Optional[Sequence[str]] = None,
    streams: Optional[Sequence[str]] = None,
    outcome: Optional[str] = None,
    environment: Optional[str] = None,
    task: Optional[str] = None,
    contributor: Optional[str] = None,
    has_recovery: Optional[bool] = None,
    min_duration_s: Optional[float] = None,
    max_duration_s: Optional[float] = None,
    concurrency: int = 4,
    limit_rate: Optional[float] = None,
    keep_original_indices: bool = False,
    progress: bool = True,
    stop: Optional[threading.Event] = None,
    refresh_margin_seconds: float = 60.0,
    now: Callable[[], float] = time.time,
    max_files_per_request: Optional[int] = None,
) -> PullSummary:
    """Pulls `episodes` (ids; or the episodes matching the filters `outcome`, `environment`, `task`,
    `contributor`, `has_recovery`, `min_duration_s` / `max_duration_s`, as `Client.episodes` takes
    them; or the whole version) of `streams` (or every stream) into `dest`.

    Files already verified on disk are skipped, partial ones continued; every download request is an
    entry in the disclosure log, and so is each renewal of URLs that expire on the way (`now` is the
    clock they expire by). Setting `stop` (or Ctrl-C) interrupts the pull; run it again to resume.
    """
    started = time.monotonic()
    stop = stop or threading.Event()
    root = Path(dest)
    manifest = client.manifest(dataset_id, version)
    fmt = manifest.get("format")
    flt = (
        episode_filter(
            outcome=outcome,
            environment=environment,
            task=task,
            contributor=contributor,
            has_recovery=has_recovery,
            min_duration_s=min_duration_s,
            max_duration_s=max_duration_s,
        )
        or None
    )
    scope = Scope(
        dataset_id,
        version,
        episode_ids=list(episodes) if episodes is not None else None,
        filter=flt,
        streams=list(streams) if streams is not None else None,
        include_version_files=bool(fmt),
    )
    if fmt and scope.streams is not None and "data" not in scope.streams:
        # A LeRobot dataset without its frames does not open, and adding them unasked would disclose more than asked for.
        raise PullError(
            f"{dataset_id}@{version} is a LeRobot dataset, which pull writes as one: LeRobot reads every frame from the "
            f"data files, so streams must include data (e.g. streams=['data', {', '.join(repr(s) for s in scope.streams)}])."
        )
    chosen = _episode_set(client, scope, manifest)
    in_scope = files_in_scope(manifest, scope, chosen)
    from . import lerobot as lr

    layout = (
        lr.layout(
            manifest,
            in_scope,
            keep_original_indices=keep_original_indices,
            streams=scope.streams,
            trimmed=lr.earlier_trimmed_originals(root, manifest),
        )
        if fmt
        else None
    )
    place_of: Callable[[dict[str, Any]], str] = layout.place_of if layout else (lambda f: f["path"])
    summary = PullSummary(
        dataset_id=dataset_id,
        version=version,
        dir=str(dest),
        files=len(in_scope),
        bytes=sum(f["size_bytes"] for f in in_scope),
    )

    pending, corrupt, partial_bytes = _check_local(root, in_scope, summary, place_of, layout)
    if corrupt:
        print(f"{len(corrupt)} file(s) on disk do not match the manifest and will be fetched again.", file=sys.stderr)
    plan = plan_requests(
        scope,
        in_scope,
        pending,
        filter_covers=bool(flt and episodes is None),
        limit=max_files_per_request or 10_000,
        episodes=chosen,
    )
    for file, reason in plan.unplannable:
        summary.failed.append({"path": file["path"], "reason": f"cannot be requested: {reason}"})

    bar = _Progress(len(pending), sum(f["size_bytes"] for f in pending), progress)
    bar.bytes(partial_bytes)
    run = _Run(client, root, summary, bar, corrupt, place_of, stop, concurrency, now, refresh_margin_seconds)
    run.throttle = Throttle(limit_rate) if limit_rate else None
    http = httpx.Client(timeout=httpx.Timeout(60.0, connect=15.0), follow_redirects=False)
    try:
        for request in plan.requests if pending else []:
            if stop.is_set():
                break
            try:
                run.request(http, request)
            except KeyboardInterrupt:
                stop.set()
                break
            except Exception as error:  # the download itself refused (a licence revoked mid-run, say)
                if stop.is_set():
                    break
                for file in request.files:
                    summary.failed.append({"path": file["path"], "reason": str(error)})
    finally:
        http.close()
        bar.close()
    summary.interrupted = stop.is_set()
    summary.co_delivered_episode_ids = sorted(
        {e for d in run.records for e in d["co_delivered_episode_ids"]}, key=lambda s: s.encode()
    )
    # meta/ describes what is on disk, so it is written only once every file of the scope is.
    if fmt and layout and not summary.interrupted and not summary.failed:
        summary.lerobot = lr.finish(root, fmt, manifest, in_scope, layout, chosen, run.delivered_by, run.records)
    # Any other format: the directory still says which download delivered which file of which episodes.
    if not fmt and not summary.interrupted and not summary.failed:
        from .lerobot import write_files_provenance

        write_files_provenance(root, manifest, in_scope, run.delivered_by, run.records)
    summary.seconds = time.monotonic() - started
    return summary


def _episode_set(client: "Client", scope: Scope, manifest: dict[str, Any]) -> Optional[set[str]]:
    if scope.streams is not None:
        unknown = [s for s in scope.streams if s not in manifest["streams"]]
        if unknown:
            raise PullError(
                f"Unknown stream(s) for {scope.dataset_id}@{scope.version}: {', '.join(map(shown, unknown))}. "
                f"Its streams are: {', '.join(map(shown, manifest['streams']))}."
            )
    chosen: Optional[set[str]] = None
    if scope.episode_ids is not None:
        with_files = {e for f in manifest["files"] for e in f["episode_ids"]}
        unknown = [e for e in scope.episode_ids if e not in with_files]
        if unknown:
            more = ", ..." if len(unknown) > 20 else ""
            raise PullError(
                f"No files of these episodes in {scope.dataset_id}@{scope.version}: {', '.join(map(shown, unknown[:20]))}{more}."
            )
        chosen = set(scope.episode_ids)
    if scope.filter:
        matching = {
            e["episode_id"] for e in client.episodes(scope.dataset_id, scope.version, **scope.filter)
        }
        chosen = matching if chosen is None else {e for e in chosen if e in matching}
    return chosen


def _check_local(root: Path, files: list[dict[str, Any]], summary: PullSummary, place_of: Any, layout: Any):
    pending: list[dict[str, Any]] = []
    corrupt: set[str] = set()
    partial_bytes = 0
    for file in files:
        try:
            dest = destination(root, place_of(file))
        except ValueError as error:
            summary.failed.append({"path": file["path"], "reason": str(error)})
            continue
        state = local_state(dest, file)
        kept = layout.trimmed_copy_of(file) if layout else None
        if kept is not None and (sha256_file(dest) if dest.is_file() else None) == kept[0]:
            # A meta/ file an earlier pull delivered and cut down to its episodes, still as it left it.
            summary.already_verified += 1
            continue
        if state == "verified" or _adopt_verified_copy(root, file, dest, layout.alternatives_of(file) if layout else []):
            summary.already_verified += 1
            continue
        if state == "corrupt":
            corrupt.add(file["path"])
        partial = partial_path(dest)
        if partial.is_file() and partial.stat().st_size <= file["size_bytes"]:
            partial_bytes += partial.stat().st_size
        pending.append(file)
    return pending, corrupt, partial_bytes


def _adopt_verified_copy(root: Path, file: dict[str, Any], dest: Path, alternatives: list[str]) -> bool:
    """A verified copy where an earlier pull kept the file is moved into place: fetching it again would be another disclosure."""
    for alternative in alternatives:
        source = destination(root, alternative)
        if local_state(source, file) != "verified":
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, dest)
        return True
    return False


class _Lease:
    """The signed URLs of one planned request, renewed (as a new download) when they expire."""

    def __init__(self, run: "_Run", request: PlannedRequest, open_paths: set[str]) -> None:
        self.run = run
        self.request = request
        self.open = open_paths
        self.generation = 0
        self.lock = threading.Lock()
        self.document: dict[str, Any] = {}
        self.urls: dict[str, str] = {}
        self.issue(request.body)

    def issue(self, body: dict[str, Any]) -> None:
        document = self.run.client._create_download(body)
        self.document = document
        self.run.summary.downloads.append(document["download_id"])
        self.run.records.append(
            {"download_id": document["download_id"], "co_delivered_episode_ids": document["co_delivered_episode_ids"]}
        )
        self.urls = {f["path"]: f["url"] for f in document["files"]}

    def expires_at(self) -> float:
        from datetime import datetime

        return datetime.fromisoformat(self.document["expires_at"].replace("Z", "+00:00")).timestamp()

    def url(self, file: dict[str, Any]) -> tuple[str, int]:
        if self.run.now() >= self.expires_at() - self.run.margin:
            self.renew(self.generation, "expire")
        with self.lock:
            return self.urls[file["path"]], self.generation

    def renew(self, generation: int, why: str) -> None:
        """Requests the still-open files again, once per generation however many transfers ask."""
        with self.lock:
            if generation != self.generation:
                return
            self.run.summary.url_renewals += 1
            old = self.document
            self.run.bar.log(
                f"URLs of {shown(old['download_id'])} expire at {shown(old['expires_at'])}: requesting them again (a new download)."
                if why == "expire"
                else f"The store refused a URL of {shown(old['download_id'])}: requesting the files again (a new download)."
            )
            still_open = [f for f in self.request.files if f["path"] in self.open]
            self.issue(narrowed(self.request.body, still_open))
            self.generation += 1


class _Run:
    def __init__(self, client, root, summary, bar, corrupt, place_of, stop, concurrency, now, margin) -> None:
        self.client = client
        self.root = root
        self.summary = summary
        self.bar = bar
        self.corrupt = corrupt
        self.place_of = place_of
        self.stop = stop
        self.concurrency = max(1, concurrency)
        self.now = now
        self.margin = margin
        self.throttle: Optional[Throttle] = None
        self.delivered_by: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def fail(self, path: str, reason: str) -> None:
        with self.lock:
            self.summary.failed.append({"path": path, "reason": reason})

    def request(self, http: httpx.Client, request: PlannedRequest) -> None:
        open_paths = {f["path"] for f in request.files}
        lease = _Lease(self, request, open_paths)
        queue = []
        for file in request.files:
            if file["path"] in lease.urls:
                queue.append(file)
            else:
                self.fail(file["path"], "the download did not include it")

        def work(file: dict[str, Any]) -> None:
            if self.stop.is_set():
                return
            try:
                reason = self.transfer(http, lease, file)
                if reason:
                    self.fail(file["path"], reason)
            except Interrupted:
                return
            except Exception as error:
                if not self.stop.is_set():
                    self.fail(file["path"], shown(str(error)))
            finally:
                with lease.lock:
                    open_paths.discard(file["path"])

        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            futures = [pool.submit(work, f) for f in queue]
            for future in futures:
                # Short waits, so that Ctrl-C reaches the main thread while transfers run.
                while True:
                    try:
                        future.result(timeout=0.2)
                        break
                    except FutureTimeout:
                        continue
        except KeyboardInterrupt:
            self.stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def transfer(self, http: httpx.Client, lease: _Lease, file: dict[str, Any]) -> Optional[str]:
        dest = destination(self.root, self.place_of(file))
        renewed = False
        while True:
            url, generation = lease.url(file)

            def on_bytes(n: int) -> None:
                with self.lock:
                    self.summary.bytes_received += n
                self.bar.bytes(n)

            result = fetch_file(
                http, file, url, dest, stop=self.stop, on_bytes=on_bytes, on_wait=self.bar.log, throttle=self.throttle
            )
            if result.ok:
                with self.lock:
                    self.delivered_by[file["path"]] = lease.document["download_id"]
                    self.summary.downloaded += 1
                    if result.resumed_from > 0 and not result.range_ignored:
                        self.summary.resumed += 1
                    if result.range_ignored:
                        self.summary.range_ignored += 1
                    if file["path"] in self.corrupt:
                        self.summary.refetched_corrupt += 1
                self.bar.file_done()
                return None
            if not result.expired:
                return result.reason
            if renewed:
                return "the store refused the URL (403) even after it was requested again"
            lease.renew(generation, "refused")
            renewed = True
