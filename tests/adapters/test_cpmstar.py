"""CPMStar's own rule over its recipe: the params moved up into ``imp.ext`` (other keys kept) and the
imps that refuse the whole request (the answer and bid typing are the recipe's steps, tested there)."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.cpmstar import build

ENDPOINT = "//host"
ADAPTER = build(AdapterConfig("cpmstar", ENDPOINT))


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"placementId": 1}}, {"placementId": 1}),
        (
            {"gpid": "/p", "bidder": {"placementId": 1, "subpoolId": 2}},
            {"gpid": "/p", "placementId": 1, "subpoolId": 2},
        ),
        ({"placementId": 9, "bidder": {"placementId": 1}}, {"placementId": 1}),  # the params win
        ({"bidder": None, "tid": "t"}, {"tid": "t"}),
        ({"bidder": {"big": 2**60}}, {"big": float(2**60)}),  # numbers pass through Go's float64
    ],
)
def test_params_move_up_into_the_ext(ext, want):
    request = {"id": "r", "imp": [{"id": "i", "banner": {}, "ext": ext}]}
    calls, errors = ADAPTER.make_requests(request, RequestInfo(bidder="cpmstar"))
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(ENDPOINT, ["i"])]
    assert orjson.loads(calls[0].body or b"")["imp"][0]["ext"] == want


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([], "No Imps in Bid Request"),
        ([{"id": "i", "banner": {}, "ext": {}}], "bidder field not found in impression extension"),
        ([{"id": "i", "banner": {}, "ext": None}], "bidder field not found in impression extension"),
        (
            [{"id": "i", "native": {}, "ext": {"bidder": {}}}],
            "Only Banner and Video bid-types are supported at this time",
        ),
        (
            [{"id": "a", "video": {}, "ext": {"bidder": {}}}, {"id": "b", "audio": {}, "ext": {"bidder": {}}}],
            "Only Banner and Video bid-types are supported at this time",
        ),
        ([{"id": "i", "banner": {}, "ext": {"bidder": "x"}}], 'expect { or n, but found "'),
        ([{"id": "i", "banner": {}, "ext": 1}], "expect { or n, but found 1"),
    ],
)
def test_imps_that_refuse_the_request(imps, want):
    calls, errors = ADAPTER.make_requests({"id": "r", "imp": imps}, RequestInfo(bidder="cpmstar"))
    assert calls == []
    assert [(error.code, error.message) for error in errors] == [(ErrorCode.BAD_INPUT, want)]
