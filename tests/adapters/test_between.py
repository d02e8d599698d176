"""Between's own call (the params' wording, headers and the answer are recipe steps, tested there)."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.between import build

ADAPTER = build(AdapterConfig("between", "http://{{.Host}}/{{.PublisherID}}"))
INFO = RequestInfo("between")
PARAMS = {"host": "h.example", "publisher_id": "p"}


def _imp(imp_id, params=PARAMS, banner=None):
    return {"id": imp_id, "banner": banner or {"w": 1, "h": 2}, "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([_imp("a", {"host": "x", "publisher_id": "q"}), _imp("b")], "http://h.example/p"),  # the last imp's
        ([_imp("a"), _imp("b", {"host": "", "publisher_id": "p"})], ['"host" is missing']),
        ([_imp("a", {"host": "h"})], ['"publisher_id" is missing']),
        (
            [_imp("a", banner={"format": []}), _imp("b", 1), {"id": "c", "ext": {"bidder": PARAMS}}],
            ["Need at least one size", "invalid ImpExt", "include a Banner object"],
        ),
        ([], ["No valid Imps in Bid Request"]),
    ],
)
def test_calls(imps, want):
    calls, errors = ADAPTER.make_requests({"site": {"page": "https://s.example"}, "imp": imps}, INFO)
    if isinstance(want, str):
        assert [c.uri for c in calls] == [want] and not errors
        assert [imp["secure"] for imp in orjson.loads(calls[0].body)["imp"]] == [1] * len(imps)
    else:
        assert calls == [] and len(errors) == len(want)
        assert all(part in e.message for part, e in zip(want, errors, strict=True))


def test_the_banner_sized_and_the_ext_kept():
    calls, _ = ADAPTER.make_requests({"imp": [_imp("a", banner={"format": [{"w": 3, "h": 4}]})]}, INFO)
    imp = orjson.loads(calls[0].body)["imp"][0]
    assert imp["banner"] == {"w": 3, "h": 4} and imp["secure"] == 0 and imp["ext"] == {"bidder": PARAMS}
