"""The client against a hostile service, served by the test itself on 127.0.0.1: one that answers a
next cursor for ever (the same one, or always a new one), an answer without end, a Retry-After
of years, and a gateway's 502 in front of it. The client must stop each time, with an error that says why, in bounded memory and time.
No real service is needed."""

from __future__ import annotations

import json
import resource
import threading
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

import das_client
from das_client import client as client_module
from das_client.client import MAX_ANSWER_BYTES, MAX_WAIT

PIECE = b" " * (1024 * 1024)


class Hostile:
    def __init__(self) -> None:
        self.asked: dict[str, int] = {}
        self.sent_of_endless = 0
        self.url = ""
        self.idempotency_keys: list[str | None] = []


def _routes(hostile: Hostile) -> dict[str, Callable[[BaseHTTPRequestHandler, dict[str, list[str]]], None]]:
    def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def envelope(code: str, message: str) -> dict[str, Any]:
        return {"error": {"code": code, "message": message, "request_id": "req_hostile"}}

    def endless(handler: BaseHTTPRequestHandler, _: dict[str, list[str]]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        handler.wfile.write(b'{"licences":[')
        try:
            while hostile.sent_of_endless < 8 * MAX_ANSWER_BYTES:
                handler.wfile.write(PIECE)
                hostile.sent_of_endless += len(PIECE)
        except OSError:
            return  # the client dropped the connection, as it should

    def briefly(handler: BaseHTTPRequestHandler, _: dict[str, list[str]]) -> None:
        if hostile.asked["/api/v1/datasets/briefly/versions"] == 1:
            return send_json(handler, 429, envelope("rate_limited", "Too many requests for this key."), {"Retry-After": "2"})
        send_json(handler, 200, {"dataset_id": "briefly", "versions": [], "next_cursor": None})

    def gateway(handler: BaseHTTPRequestHandler, _: dict[str, list[str]]) -> None:
        """A load balancer's 502 (an HTML page, not the API's envelope) once, then the service's answer."""
        hostile.idempotency_keys.append(handler.headers.get("Idempotency-Key"))
        path = urlsplit(handler.path).path
        if hostile.asked[path] == 1:
            page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
            handler.send_response(502)
            handler.send_header("Content-Type", "text/html")
            handler.send_header("Content-Length", str(len(page)))
            handler.end_headers()
            handler.wfile.write(page)
            return
        if path.endswith("/plan"):
            return send_json(handler, 422, envelope("scope_too_large", "Too many files."))
        send_json(handler, 200, {"dataset_id": "gateway", "versions": [], "next_cursor": None})

    far = format_datetime(datetime.now(timezone.utc) + timedelta(days=1), usegmt=True)
    return {
        # The same cursor, again and again.
        "/api/v1/notices": lambda h, q: send_json(h, 200, {"notices": [], "next_cursor": "again"}),
        "/api/v1/datasets/loop/versions/1.0.0/episodes": lambda h, q: send_json(
            h, 200, {"dataset_id": "loop", "version": "1.0.0", "total": 1, "episodes": [{"episode_id": "loop-000000"}], "next_cursor": "again"}
        ),
        # Always a new cursor.
        "/api/v1/datasets": lambda h, q: send_json(
            h, 200, {"datasets": [], "next_cursor": f"c{int(q.get('cursor', ['c0'])[0][1:]) + 1}"}
        ),
        "/api/v1/licences": endless,
        "/api/v1/datasets/years/versions": lambda h, q: send_json(
            h, 429, envelope("rate_limited", "Too many requests for this key."), {"Retry-After": "999999999"}
        ),
        "/api/v1/datasets/dated/versions": lambda h, q: send_json(
            h, 503, envelope("unavailable", "Temporarily unavailable."), {"Retry-After": far}
        ),
        "/api/v1/datasets/briefly/versions": briefly,
        "/api/v1/datasets/gateway/versions": gateway,
        "/api/v1/datasets/gateway/versions/1.0.0/plan": gateway,
        "/api/v1/notices/ntc_gateway/acknowledgements": gateway,
    }


@pytest.fixture()
def hostile() -> Iterator[Hostile]:
    state = Hostile()
    routes = _routes(state)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            parts = urlsplit(self.path)
            state.asked[parts.path] = state.asked.get(parts.path, 0) + 1
            route = routes.get(parts.path)
            if route is None:
                self.send_error(404)
                return
            route(self, parse_qs(parts.query))

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.do_GET()

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def client_of(hostile: Hostile, waits: list[float]) -> das_client.Client:
    return das_client.Client("das_hostile", hostile.url, sleep=waits.append)


def test_a_cursor_answered_before_stops_notices_episodes_and_sync(hostile: Hostile, tmp_path: Path) -> None:
    client = client_of(hostile, [])
    with pytest.raises(das_client.TransportError, match="answered a next cursor it had answered before: stopped after 2 pages"):
        client.notices()
    assert hostile.asked["/api/v1/notices"] == 2
    with pytest.raises(das_client.TransportError, match="answered before"):
        list(client.episodes("loop", "1.0.0"))
    assert hostile.asked["/api/v1/datasets/loop/versions/1.0.0/episodes"] == 2
    # sync reads the notices the same way.
    provenance = {
        "dataset_id": "loop",
        "version": "1.0.0",
        "downloads": [{"download_id": "dl_1", "co_delivered_episode_ids": []}],
        "files": [{"path": "a.bin", "episode_ids": ["loop-000000"], "download_id": "dl_1", "sha256": "0" * 64}],
    }
    (tmp_path / "das-provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(das_client.TransportError, match="answered before"):
        client.sync(tmp_path)
    assert hostile.asked["/api/v1/notices"] == 4


def test_new_cursors_for_ever_stop_after_max_pages(hostile: Hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound lowered for the test's time; the rule is the same at 2000.
    monkeypatch.setattr(client_module, "MAX_PAGES", 50)
    with pytest.raises(das_client.TransportError, match="still had a next page after 50 pages"):
        client_of(hostile, []).datasets()
    assert hostile.asked["/api/v1/datasets"] == 50


def test_an_answer_without_end_is_read_up_to_its_bound(hostile: Hostile) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with pytest.raises(das_client.TransportError, match=f"more than {MAX_ANSWER_BYTES} bytes"):
        client_of(hostile, []).licences()
    # The server got a little beyond the bound into the socket's buffers before the client left.
    assert hostile.sent_of_endless < MAX_ANSWER_BYTES + 32 * 1024 * 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert peak - before < 3 * MAX_ANSWER_BYTES


@pytest.mark.parametrize("dataset", ["years", "dated"])
def test_a_retry_after_beyond_a_minute_is_an_error_at_once(hostile: Hostile, dataset: str) -> None:
    waits: list[float] = []
    with pytest.raises(das_client.ApiError) as raised:
        client_of(hostile, waits).versions(dataset)
    assert isinstance(raised.value, (das_client.RateLimited, das_client.Unavailable))
    assert f"longer than the {MAX_WAIT:.0f} s this client waits" in str(raised.value)
    assert raised.value.retry_after is not None and raised.value.retry_after > MAX_WAIT
    assert waits == []
    assert hostile.asked[f"/api/v1/datasets/{dataset}/versions"] == 1


def test_a_retry_after_within_a_minute_is_waited_for(hostile: Hostile) -> None:
    waits: list[float] = []
    assert client_of(hostile, waits).versions("briefly") == []
    assert waits == [2.0]


def test_a_gateways_502_is_asked_again_only_for_what_is_safe_to_repeat(hostile: Hostile) -> None:
    waits: list[float] = []
    client = client_of(hostile, waits)
    # A read: asked again.
    assert client.versions("gateway") == []
    assert hostile.asked["/api/v1/datasets/gateway/versions"] == 2
    # A plan carries an Idempotency-Key: asked again with the same one, so the service answers the same plan.
    with pytest.raises(das_client.ApiError) as raised:
        client.plan("gateway", "1.0.0")
    assert raised.value.status == 422
    plan_keys = hostile.idempotency_keys[2:]
    assert len(plan_keys) == 2 and plan_keys[0] is not None and plan_keys[0] == plan_keys[1]
    # An acknowledgement has no key: the 502 is the answer, not a reason to acknowledge twice.
    with pytest.raises(das_client.ApiError) as raised:
        client.acknowledge("ntc_gateway", "deleted")
    assert raised.value.status == 502
    assert hostile.asked["/api/v1/notices/ntc_gateway/acknowledgements"] == 1
    assert len(waits) == 2
