"""Comparison rules of the PBS-Go adapter harness (README §2), each returning a list of problems.

"Equal by JSON meaning": object key order is free, array order and length are not, numbers are
compared as float64 (so ``1 == 1.0``, and integers beyond 2^53 after rounding), types must match
exactly (``1`` is not ``"1"``, ``true`` is not ``1``), ``null`` is not a missing key.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from hbserver.adapters.base import BidderError, BidderResponse, RequestData
from tests.conformance.loader import ExpectedBidResponse, ExpectedError, HttpCall


def json_diff(expected: Any, actual: Any, path: str = "$") -> str | None:
    """The first difference between two decoded JSON values, or None when equal by meaning."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        if type(expected) is not type(actual) or expected != actual:
            return f"{path}: expected {expected!r}, got {actual!r}"
        return None
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return None if float(expected) == float(actual) else f"{path}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, dict) and isinstance(actual, dict):
        missing = expected.keys() - actual.keys()
        if missing:
            return f"{path}: missing key(s) {sorted(missing)}"
        extra = actual.keys() - expected.keys()
        if extra:
            return f"{path}: unexpected key(s) {sorted(extra)}"
        for key, value in expected.items():
            problem = json_diff(value, actual[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} element(s), got {len(actual)}"
        for index, (left, right) in enumerate(zip(expected, actual, strict=True)):
            problem = json_diff(left, right, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{path}: expected {expected!r}, got {actual!r}"
    return None


def object_diff(expected: Any, actual: Any) -> str | None:
    """gojsondiff's rule: both sides must be JSON objects, then equal by meaning."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return f"both sides must be JSON objects (expected {type(expected).__name__}, got {type(actual).__name__})"
    return json_diff(expected, actual)


def error_matches(actual: str, expected: ExpectedError) -> bool:
    if expected.comparison in ("", "literal"):
        return actual == expected.value
    if expected.comparison == "startswith":
        return actual.startswith(expected.value)
    if expected.comparison == "regex":  # RE2 unanchored search; the fixtures' patterns are RE2-compatible
        return re.search(expected.value, actual) is not None
    raise ValueError(f"unknown error comparison {expected.comparison!r}")


def compare_errors(stage: str, expected: list[ExpectedError], actual: list[BidderError],
                   check_text: bool = True) -> list[str]:
    """Same count; each error matches the one at the same position (unless ``check_text`` is off)."""
    messages = [error.message for error in actual]
    if len(expected) != len(actual):
        return [f"{stage}: expected {len(expected)} error(s) {[e.value for e in expected]}, got {messages}"]
    if not check_text:
        return []
    return [
        f"{stage} error {index}: expected ({want.comparison or 'literal'}) {want.value!r}, got {got!r}"
        for index, (want, got) in enumerate(zip(expected, messages, strict=True))
        if not error_matches(got, want)
    ]


_NO_BODY = object()  # a request sent without a body


def _request_problem(want: HttpCall, got: RequestData, got_body: Any) -> str | None:
    if want.uri != got.uri:
        return f"uri: expected {want.uri!r}, got {got.uri!r}"
    if want.headers is not None:
        # a header Go adds twice is one comma-joined value here (the same header on the wire)
        wanted = {name: [", ".join(values)] if isinstance(values, list) and len(values) > 1 else values
                  for name, values in want.headers.items()}
        actual_headers = {name: [value] for name, value in got.headers.items()}
        problem = json_diff(wanted, actual_headers)
        if problem:
            return f"headers: {problem}"
    if not want.imp_ids:
        return "the expected request has no impIDs, so it can never match"
    if sorted(want.imp_ids) != sorted(got.imp_ids):
        return f"impIDs: expected {sorted(want.imp_ids)}, got {sorted(got.imp_ids)}"
    if got_body is _NO_BODY or want.body is None:  # PBS-Go's diffJson: two empty bodies are equal
        if got_body is _NO_BODY and want.body is None:
            return None
        return "body: expected none, got one" if want.body is None else "body: expected one, got none"
    problem = object_diff(want.body, got_body)
    return f"body: {problem}" if problem else None


def compare_requests(expected: list[HttpCall], actual: list[RequestData]) -> list[str]:
    """Order-free matching: each expected call takes the first actual request that matches it."""
    if len(expected) != len(actual):
        return [f"MakeRequests: expected {len(expected)} request(s), got {len(actual)}"]
    bodies: list[Any] = []
    for request in actual:
        if not request.body:
            bodies.append(_NO_BODY)
            continue
        try:
            bodies.append(orjson.loads(request.body))
        except orjson.JSONDecodeError as exc:
            bodies.append(None)
            return [f"request to {request.uri} has a body that is not JSON: {exc}"]
    matched = [False] * len(actual)
    problems = []
    for index, want in enumerate(expected):
        reasons = []
        for j, got in enumerate(actual):
            reason = _request_problem(want, got, bodies[j])
            if reason is None:
                matched[j] = True
                break
            reasons.append(f"request {j}: {reason}")
        else:
            problems.append(f"expected request {index} matched none: " + "; ".join(reasons))
    problems.extend(f"actual request {j} matched no expected call" for j, hit in enumerate(matched) if not hit)
    return problems


def _video_problems(want: dict[str, Any], got: dict[str, Any] | None) -> list[str]:
    """Duration and primary category, the two fields the harness checks (zero when absent)."""
    if got is None:
        return ["video: expected bid video information, got none"]
    return [
        f"video.{name}: expected {want.get(name, zero)!r}, got {got.get(name, zero)!r}"
        for name, zero in (("duration", 0), ("primary_category", ""))
        if json_diff(want.get(name, zero), got.get(name, zero))
    ]


def compare_bid_responses(expected: list[ExpectedBidResponse], actual: list[BidderResponse]) -> list[str]:
    if len(expected) != len(actual):
        return [f"MakeBids: expected {len(expected)} non-nil response(s), got {len(actual)}"]
    problems: list[str] = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        where = f"bid response {index}"
        if want.currency and want.currency != got.currency:
            problems.append(f"{where}: currency expected {want.currency!r}, got {got.currency!r}")
        if len(want.bids) != len(got.bids):
            problems.append(f"{where}: expected {len(want.bids)} bid(s), got {len(got.bids)}")
            continue
        for k, (want_bid, got_bid) in enumerate(zip(want.bids, got.bids, strict=True)):
            at = f"{where} bid {k}"
            if want_bid.seat != got_bid.seat:
                problems.append(f"{at}: seat expected {want_bid.seat!r}, got {got_bid.seat!r}")
            if want_bid.type != got_bid.bid_type:
                problems.append(f"{at}: type expected {want_bid.type!r}, got {got_bid.bid_type!r}")
            problem = object_diff(want_bid.bid, got_bid.bid)
            if problem:
                problems.append(f"{at}: bid {problem}")
            if want_bid.video is not None:
                problems.extend(f"{at}: {p}" for p in _video_problems(want_bid.video, got_bid.bid_video))
        if want.fledge is None:
            if got.fledge_auction_configs is not None:
                problems.append(f"{where}: expected no fledge auction configs, got {got.fledge_auction_configs}")
        elif got.fledge_auction_configs is None:
            problems.append(f"{where}: expected fledge auction configs, got none")
        else:
            problem = json_diff(want.fledge, got.fledge_auction_configs)
            if problem:
                problems.append(f"{where}: fledge {problem}")
    return problems
