"""What schemathesis is told beyond the OpenAPI document, and why.

The document states every rule a request must follow that JSON Schema can state. What is left is of
two kinds, each documented in the operation's description and its 400:

1. Relations between two values of one request, which JSON Schema cannot compare: a duration range
   whose minimum exceeds its maximum. A request that breaks one is not valid, so a case meant to be
   valid is made to follow it (the bounds are put in order).
2. Rules of the service's state, which no schema of a request can know: whether an episode id or
   stream is in the version, whether a filter matches any file, whether an episode has video, and
   whether a cursor is one the service issued for this query. A valid request may still be refused
   for these, with 400 and the exact message below; such a refusal is not a failure. Any other
   400 to a valid request still is: a message that changes fails the run rather than hiding.

And two readings of the document's links:
- a link's `requestBody` is the body to send (OpenAPI's words), not fields to merge into a
  generated one, which is schemathesis's default;
- a next-page link carries the filters the cursor is bound to, `$request.query.outcome` and so on;
  schemathesis reports each one its source request did not send as data it failed to extract. It
  is given the links without them: a next page whose generated filters differ is then refused as
  a cursor of another query (kind 2).
"""

from __future__ import annotations

import json
import re
from typing import Any

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData

# (operation, error code, message) of the refusals that depend on the service's state.
STATE_REFUSALS: list[tuple[str, str, re.Pattern[str]]] = [
    # lib/cursor.ts: the MAC is the service's; a cursor of the documented shape may still be forged,
    # or belong to another query (the filters of a link's next page are not always carried over).
    (
        "GET *",
        "invalid_cursor",
        re.compile(r"^The cursor (is not one this service issued|belongs to a different query|does not fit this query)"),
    ),
    # lib/downloads/resolve-scope.ts
    ("POST /api/v1/downloads", "invalid_body", re.compile(r"^Unknown streams for ")),
    ("POST /api/v1/downloads", "invalid_body", re.compile(r"^These episode_ids are not in ")),
    ("POST /api/v1/downloads", "invalid_body", re.compile(r"^The scope matches no files in ")),
    # lib/views/plan.ts: the same questions of the version as a download's scope, and whether it is LeRobot.
    ("POST /api/v1/datasets/{id}/versions/{version}/plan", "invalid_body", re.compile(r"^Unknown streams for ")),
    ("POST /api/v1/datasets/{id}/versions/{version}/plan", "invalid_body", re.compile(r"^No files of these episodes in ")),
    (
        "POST /api/v1/datasets/{id}/versions/{version}/plan",
        "invalid_body",
        re.compile(r" is a LeRobot dataset, which is written as one"),
    ),
    # lib/withdrawals/acknowledge.ts: which files a notice's downloads delivered is the service's to know.
    (
        "POST /api/v1/notices/{notice_id}/acknowledgements",
        "invalid_body",
        re.compile(r"^deleted_paths may name only files this notice's downloads and previews delivered"),
    ),
    # lib/previews/create-preview.ts
    ("POST /api/v1/previews", "invalid_body", re.compile(r"^Not a video stream of ")),
    ("POST /api/v1/previews", "invalid_body", re.compile(r"^There is no video to preview in ")),
]


def _state_refusal(label: str, response: Any) -> bool:
    if response.status_code != 400:
        return False
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    method = label.split(" ", 1)[0]
    return any(
        operation in (label, f"{method} *") and error.get("code") == code and pattern.search(error.get("message", ""))
        for operation, code, pattern in STATE_REFUSALS
    )


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keeps every failure except a valid request's refusal for the service's state (kind 2 above)."""
    return not (isinstance(failure, RejectedPositiveData) and _state_refusal(case.operation.label, response))


@schemathesis.hook
def before_load_schema(context: Any, raw_schema: dict[str, Any]) -> None:
    """The links as schemathesis is to read them (see above)."""
    for item in raw_schema.get("paths", {}).values():
        for operation in item.values():
            for response in (operation.get("responses") or {}).values() if isinstance(operation, dict) else []:
                for link in (response.get("links") or {}).values():
                    if "requestBody" in link:
                        link["x-schemathesis"] = {"merge_body": False}
                    parameters = link.get("parameters") or {}
                    if "query.cursor" in parameters:
                        for name in [n for n in parameters if n.startswith("query.") and n != "query.cursor"]:
                            del parameters[name]


def _number(value: Any) -> float | None:
    # A query value may come as the number it stands for or, from the coverage phase, as its text.
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _in_order(values: Any) -> None:
    if not isinstance(values, dict):
        return
    low, high = _number(values.get("min_duration_s")), _number(values.get("max_duration_s"))
    if low is not None and high is not None and low > high:
        values["min_duration_s"], values["max_duration_s"] = values["max_duration_s"], values["min_duration_s"]


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    """A valid case keeps its duration range in order (kind 1 above): on the episode list and in a download's filter."""
    if case.meta is not None and case.meta.generation.mode.is_positive:
        _in_order(case.query)
        if isinstance(case.body, dict):
            _in_order(case.body.get("filter"))
    return case
