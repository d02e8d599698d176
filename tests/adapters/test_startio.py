"""Start.io's own rule: a request whose cur names currencies must name USD."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.startio import accepts_usd, build

ADAPTER = build(AdapterConfig("startio", "http://s.example/bidder/"))


@pytest.mark.parametrize(
    ("cur", "ok"), [(None, True), ([], True), (["EUR", "USD"], True), (["EUR"], False), (["usd"], False)]
)
def test_accepts_usd(cur, ok):
    assert accepts_usd({} if cur is None else {"cur": cur}) is ok


def test_refused_request_makes_no_call():
    request = {"cur": ["EUR"], "imp": [{"id": "a", "banner": {}}]}
    calls, errors = ADAPTER.make_requests(request, RequestInfo("startio"))
    assert calls == [] and [e.message for e in errors] == ["unsupported currency: only USD is accepted"]
    calls, errors = ADAPTER.make_requests({**request, "cur": ["USD"]}, RequestInfo("startio"))
    assert len(calls) == 1 and not errors
