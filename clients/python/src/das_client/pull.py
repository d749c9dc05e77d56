"""`pull`: a scope of a version into a directory, as `das pull` does it (lib/client/pull.ts): the
service's plan asked for (which files, where, how to get and check each one, what to write for
LeRobot), checked (plan.check_plan), and carried out: files verified on disk skipped, the rest
fetched in parallel from the plan's downloads (each a disclosure) and its signed URLs, resumable,
each SHA-256-checked against the plan and renamed into place; URLs that expire on the way asked for
again; once every file is there, the transformed files and `das-provenance.json` written. Nothing
here decides what a version turns into on disk."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import httpx

from .client import episode_filter, plan_request
from .errors import InvalidBody, PullError
from .lerobot import lerobot_result, remove_leftovers, write_transformed
from .plan import PROVENANCE_FILE, Plan, PlannedFile, by_key, check_plan, fetched_place, narrowed, other_place, path_inside
from .provenance import earlier_provenance, provenance_of, write_provenance
from .transfer import Interrupted, Throttle, fetch_file, local_state, partial_path, sha256_file, shown, size_on_disk

if TYPE_CHECKING:
    from .client import Client


@dataclass
class PullSummary:
    """What a pull did; the same fields as `das pull --json`."""

    dataset_id: str
    version: str
    dir: str
    revision: str = ""
    files: int = 0
    bytes: int = 0
    already_verified: int = 0
    downloaded: int = 0
    resumed: int = 0
    refetched_corrupt: int = 0
    refetched_changed: int = 0
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
) -> PullSummary:
    """Pulls `episodes` (ids; or the episodes matching the filters `outcome`, `environment`, `task`,
    `contributor`, `has_recovery`, `min_duration_s` / `max_duration_s`, as `Client.episodes` takes
    them; or the whole version) of `streams` (or every stream) into `dest`, as the service's plan
    of them says.

    Files already verified on disk are skipped, partial ones continued; every download request is an
    entry in the disclosure log, and so is each renewal of URLs that expire on the way (`now` is the
    clock they expire by). Setting `stop` (or Ctrl-C) interrupts the pull; run it again to resume.
    A plan the client cannot carry out safely is refused whole (TransportError) before anything is
    fetched or written.
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
    request = plan_request(
        episode_ids=episodes, filter=flt, streams=streams, keep_original_indices=keep_original_indices
    )
    root = Path(dest)
    plan = ask_for_plan(client, dataset_id, version, request)
    summary, provenance = carry_out_plan(
        client,
        plan,
        root,
        dataset_id,
        version,
        request,
        concurrency=concurrency,
        limit_rate=limit_rate,
        progress=progress,
        stop=stop,
        refresh_margin_seconds=refresh_margin_seconds,
        now=now,
    )
    if provenance is not None:
        write_provenance(root, provenance)
    return summary


def ask_for_plan(client: "Client", dataset_id: str, version: str, request: dict[str, Any]) -> Plan:
    """The service's plan; a request it refuses as such (an unknown stream or episode) is a PullError."""
    try:
        return client.plan(dataset_id, version, **request)
    except InvalidBody as error:
        raise PullError(error.message) from None


def carry_out_plan(
    client: "Client",
    plan: Any,
    root: Path,
    dataset_id: str,
    version: str,
    request: dict[str, Any],
    *,
    downloads: bool = True,
    concurrency: int = 4,
    limit_rate: Optional[float] = None,
    progress: bool = True,
    stop: Optional[threading.Event] = None,
    refresh_margin_seconds: float = 60.0,
    now: Callable[[], float] = time.time,
) -> tuple[PullSummary, Optional[dict[str, Any]]]:
    """Carries a plan out: checks it, skips the files already verified on disk (moving one an
    earlier run kept at its other place), fetches the rest (a download at a time, cut down to the
    files missing, its URLs renewed as a new download when they expire; then the files the plan
    hands out by URL), verifies each against the plan and renames it into place, and once every
    file is there writes the transformed ones. Returns the provenance to write, or None when files
    are missing (interrupted or failed: run it again). `downloads=False` fetches only what the plan
    hands out by URL: a file of an episode not on disk fails (sync fetches no episode)."""
    started = time.monotonic()
    plan = check_plan(plan, dataset_id, version)
    earlier = earlier_provenance(root, dataset_id, version)
    summary = PullSummary(
        dataset_id=plan["dataset_id"],
        version=plan["version"],
        dir=str(root),
        revision=plan["revision"],
        files=len(plan["files"]),
        bytes=sum(f["size_bytes"] for f in plan["files"]),
        failed=[{"path": str(u.get("path")), "reason": str(u.get("reason"))} for u in plan["unplannable"]],
    )
    pending, corrupt, changed, partial_bytes = _check_local(root, plan["files"], summary, earlier)
    if changed:
        print(shown(_changed_since_last_pull(changed, (earlier or {}).get("revision"), plan["revision"])), file=sys.stderr)
    if corrupt:
        print(
            f"{len(corrupt)} file(s) on disk match neither the plan nor what the last pull fetched (damaged or edited since)"
            " and will be fetched again.",
            file=sys.stderr,
        )
    bar = _Progress(len(pending), sum(f["size_bytes"] for f in pending), progress)
    bar.bytes(partial_bytes)
    run = _Run(client, plan, request, root, summary, bar, corrupt, changed, stop or threading.Event(), concurrency, now)
    run.margin = refresh_margin_seconds
    run.throttle = Throttle(limit_rate) if limit_rate else None
    try:
        if pending:
            run.fetch_pending(pending, downloads)
    except KeyboardInterrupt:
        run.stop.set()
    finally:
        bar.close()
        run.http.close()
    summary.interrupted = run.stop.is_set()
    summary.co_delivered_episode_ids = sorted(
        {e for d in run.records for e in d["co_delivered_episode_ids"]}, key=lambda s: s.encode()
    )
    provenance = None
    # What the pull writes itself describes what is on disk, so it is written only once every file of the plan is.
    if not summary.interrupted and not summary.failed:
        transformed = write_transformed(root, plan, earlier)
        summary.failed.extend(transformed["failed"])
        if not summary.failed:
            remove_leftovers(root, plan, earlier)
            provenance = provenance_of(plan, request, earlier, run.delivered_by, run.records, transformed["written"])
            summary.lerobot = lerobot_result(
                plan,
                transformed,
                root,
                path_inside(root, PROVENANCE_FILE),
                bool(request.get("keep_original_indices")),
            )
    summary.seconds = time.monotonic() - started
    return summary, provenance


def _check_local(root: Path, files: list[PlannedFile], summary: PullSummary, earlier: Optional[dict[str, Any]]):
    pending: list[PlannedFile] = []
    corrupt: set[str] = set()
    changed: set[str] = set()
    pulled_before = {f.get("path"): f for f in (earlier or {}).get("files") or [] if isinstance(f, dict)}
    partial_bytes = 0
    for file in files:
        try:
            # A symbolic link on the way out of the directory fails the file before its download is asked for.
            dest = path_inside(root, fetched_place(file))
            state = _state_on_disk(dest, file, pulled_before.get(file["path"]))
            if state == "verified" or _adopt_other_copy(root, file, dest):
                summary.already_verified += 1
                continue
        except (OSError, ValueError) as error:
            summary.failed.append({"path": file["path"], "reason": shown(str(error))})
            continue
        if state == "corrupt":
            corrupt.add(file["path"])
        if state == "changed":
            changed.add(file["path"])
        partial = partial_path(dest)
        if partial.is_file() and partial.stat().st_size <= file["size_bytes"]:
            partial_bytes += partial.stat().st_size
        pending.append(file)
    return pending, corrupt, changed, partial_bytes


def _state_on_disk(dest: Path, file: PlannedFile, before: Optional[dict[str, Any]]) -> str:
    """A file on disk against the plan and against what the last pull recorded for its path: the
    plan's bytes ('verified'), none ('missing'), the last pull's bytes where the plan now names
    others ('changed': an update, such as meta/ rendered again after a withdrawal), or bytes that
    are neither ('corrupt': damaged or edited since they were pulled). Hashed once at most."""
    size = size_on_disk(dest)
    if size is None:
        return "missing"
    plan_changed = before is not None and before.get("sha256") != file["sha256"]
    before_size = before.get("size_bytes") if before is not None else None
    if size != file["size_bytes"] and not (plan_changed and size == before_size):
        return "corrupt"
    digest = sha256_file(dest)
    if size == file["size_bytes"] and digest == file["sha256"]:
        return "verified"
    return "changed" if plan_changed and size == before_size and digest == before.get("sha256") else "corrupt"


def _changed_since_last_pull(changed: set[str], was: Any, now: str) -> str:
    """The line that says which files the plan changed since the last pull: an update, not damage."""
    paths = sorted(changed, key=lambda p: p.encode())
    named = ", ".join(paths[:5]) + (f", and {len(paths) - 5} more" if len(paths) > 5 else "")
    revision = (
        f"revision {was[:12]} then, {now[:12]} now" if isinstance(was, str) and was and was != now else "the plan names new bytes"
    )
    return f"{len(changed)} file(s) changed since the last pull ({revision}) will be fetched: {named}."


def _adopt_other_copy(root: Path, file: PlannedFile, dest: Path) -> bool:
    """A verified copy where an earlier run kept the file's bytes (at its path, or under
    .das/original/ when that run wrote it transformed) is moved into place: fetching it again
    would be another disclosure."""
    other = path_inside(root, other_place(file))
    if local_state(other, file) != "verified":
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    other.replace(dest)
    return True


def _timestamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class _Lease:
    """The signed URLs of one download, renewed (as a new download, for the files still open) when they expire."""

    def __init__(self, run: "_Run", body: dict[str, Any], files: list[PlannedFile]) -> None:
        self.run = run
        self.body = body
        self.files = files
        self.open = {f["path"] for f in files}
        self.generation = 0
        self.lock = threading.Lock()
        self.document: dict[str, Any] = {}
        self.urls: dict[str, str] = {}
        self._issue(body)

    def _issue(self, body: dict[str, Any]) -> None:
        document = self.run.client._create_download(body)
        self.document = document
        with self.run.lock:
            self.run.summary.downloads.append(document["download_id"])
            self.run.records.append(
                {"download_id": document["download_id"], "co_delivered_episode_ids": document["co_delivered_episode_ids"]}
            )
        # Only the plan's files are taken from the answer, whatever else it lists.
        self.urls = {f["path"]: f["url"] for f in document["files"] if f["path"] in self.open}

    def url(self, file: PlannedFile) -> Optional[tuple[str, int]]:
        if self.run.now() >= _timestamp(self.document["expires_at"]) - self.run.margin:
            self.renew(self.generation, "expire")
        with self.lock:
            url = self.urls.get(file["path"])
            return None if url is None else (url, self.generation)

    def renew(self, generation: int, why: str) -> None:
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
            still_open = [f for f in self.files if f["path"] in self.open]
            self._issue(narrowed(self.body, still_open, False)[0])
            self.generation += 1

    def delivered_by(self, _: PlannedFile) -> Optional[str]:
        return self.document["download_id"]

    def close(self, file: PlannedFile) -> None:
        with self.lock:
            self.open.discard(file["path"])


class _PlanUrls:
    """The URLs the plan hands out itself (files of no episode: meta/, a README), renewed by asking
    for the plan again when they expire: a plan of another revision (a withdrawal since) is not mixed in."""

    def __init__(self, run: "_Run") -> None:
        self.run = run
        self.generation = 0
        self.lock = threading.Lock()
        self._take(run.plan)

    def _take(self, plan: Plan) -> None:
        self.urls = {f"{f['path']}\0{f['sha256']}": f["get"]["url"] for f in plan["files"] if "url" in f["get"]}
        self.expires_at = plan["expires_at"]

    def url(self, file: PlannedFile) -> Optional[tuple[str, int]]:
        if self.run.now() >= _timestamp(self.expires_at) - self.run.margin:
            self.renew(self.generation, "expire")
        with self.lock:
            url = self.urls.get(f"{file['path']}\0{file['sha256']}")
            return None if url is None else (url, self.generation)

    def renew(self, generation: int, why: str) -> None:
        with self.lock:
            if generation != self.generation:
                return
            run = self.run
            run.summary.url_renewals += 1
            run.bar.log(
                f"The plan's URLs expire at {shown(self.expires_at)}: asking for the plan again."
                if why == "expire"
                else "The store refused a URL of the plan: asking for the plan again."
            )
            again = check_plan(
                run.client.plan(run.plan["dataset_id"], run.plan["version"], **run.request),
                run.plan["dataset_id"],
                run.plan["version"],
            )
            if again["revision"] != run.plan["revision"]:
                raise PullError(
                    f"the version changed while it was pulled (revision {run.plan['revision']}, now {shown(again['revision'])}): run the pull again"
                )
            self._take(again)
            self.generation += 1

    def delivered_by(self, _: PlannedFile) -> Optional[str]:
        return None

    def close(self, _: PlannedFile) -> None:
        pass


class _Run:
    def __init__(self, client, plan, request, root, summary, bar, corrupt, changed, stop, concurrency, now) -> None:
        self.client = client
        self.plan = plan
        self.request = request
        self.root = root
        self.summary = summary
        self.bar = bar
        self.corrupt = corrupt
        self.changed = changed
        self.stop = stop
        self.concurrency = max(1, concurrency)
        self.now = now
        self.margin = 60.0
        self.throttle: Optional[Throttle] = None
        self.delivered_by: dict[str, str] = {}
        self.records: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.http = httpx.Client(timeout=httpx.Timeout(60.0, connect=15.0), follow_redirects=False)

    def fail(self, path: str, reason: str) -> None:
        with self.lock:
            self.summary.failed.append({"path": path, "reason": reason})

    def fetch_pending(self, pending: list[PlannedFile], downloads: bool) -> None:
        """Every download with files missing, in the plan's order, then the files the plan hands out by URL."""
        of_download = by_key([f for f in pending if "download" in f["get"]], lambda f: f["get"]["download"])
        by_url = [f for f in pending if "download" not in f["get"]]
        sizes = by_key([f for f in self.plan["files"] if "download" in f["get"]], lambda f: f["get"]["download"])
        for index in sorted(of_download):
            files = of_download[index]
            if self.stop.is_set():
                return
            if not downloads:
                for file in files:
                    self.fail(file["path"], "not on disk as the plan has it: run the pull again to fetch it")
                continue
            body = self.plan["downloads"][index]
            for narrow in narrowed(body, files, len(files) == len(sizes[index])):
                ids = set(narrow.get("episode_ids") or [])
                own = files if narrow is body else [f for f in files if f["get"].get("episode_id") in ids]
                try:
                    lease = _Lease(self, narrow, own)
                except Exception as error:  # the download itself was refused (a licence revoked mid-run, say)
                    for file in own:
                        self.fail(file["path"], shown(str(error)))
                    continue
                self.run_files(lease, own)
        if by_url and not self.stop.is_set():
            self.run_files(_PlanUrls(self), by_url)

    def run_files(self, source: Any, files: list[PlannedFile]) -> None:
        """The files of one source, N at a time."""

        def work(file: PlannedFile) -> None:
            if self.stop.is_set():
                return
            try:
                reason = self.transfer(source, file)
                if reason:
                    self.fail(file["path"], reason)
            except Interrupted:
                return
            except Exception as error:
                if not self.stop.is_set():
                    self.fail(file["path"], shown(str(error)))
            finally:
                source.close(file)

        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            futures = [pool.submit(work, f) for f in files]
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

    def transfer(self, source: Any, file: PlannedFile) -> Optional[str]:
        """One file, renewing its URL once if the store refuses it; returns why it failed, if it did."""
        dest = path_inside(self.root, fetched_place(file))
        renewed = False
        while True:
            leased = source.url(file)
            if leased is None:
                return "the download did not include it"
            url, generation = leased

            def on_bytes(n: int) -> None:
                with self.lock:
                    self.summary.bytes_received += n
                self.bar.bytes(n)

            result = fetch_file(
                self.http, file, url, dest, stop=self.stop, on_bytes=on_bytes, on_wait=self.bar.log, throttle=self.throttle
            )
            if result.ok:
                with self.lock:
                    by = source.delivered_by(file)
                    if by:
                        self.delivered_by[file["path"]] = by
                    self.summary.downloaded += 1
                    if result.resumed_from > 0 and not result.range_ignored:
                        self.summary.resumed += 1
                    if result.range_ignored:
                        self.summary.range_ignored += 1
                    if file["path"] in self.corrupt:
                        self.summary.refetched_corrupt += 1
                    if file["path"] in self.changed:
                        self.summary.refetched_changed += 1
                self.bar.file_done()
                return None
            if not result.expired:
                return result.reason
            if renewed:
                return "the store refused the URL (403) even after it was requested again"
            source.renew(generation, "refused")
            renewed = True
